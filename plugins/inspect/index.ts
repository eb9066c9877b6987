import { definePlugin, EXIT, PlinthError, safeLine } from 'plinth/sdk';
import { explain } from './explain.js';
import { candidateRows, formatExplanation, formatPluginList, formatProblems } from './format.js';
import { maskCredentialKeys } from './mask.js';
import { configProblems } from './problems.js';

export default definePlugin({
  setup(kernel) {
    kernel.hooks.commands.tap((registry) => {
      registry.add({
        name: 'plugins list',
        options: { all: { type: 'boolean', description: 'Also list versions that were found but not chosen' } },
        run({ options, json, out }) {
          const view = kernel.inspect();
          if (json) return out.json({ plugins: view.plugins, candidates: candidateRows(view.resolution), invalid: view.invalid });
          out.print(formatPluginList(view, options.all === true));
        },
      });

      registry.add({
        name: 'plugins why',
        args: [{ name: 'name', required: true, description: 'A plugin name' }],
        run({ args, json, out }) {
          const name = args[0]!;
          const explanation = explain(kernel.inspect().resolution, name);
          if (!explanation) {
            throw new PlinthError('PLN_E_PLUGIN_UNKNOWN', `no plugin named "${safeLine(name)}" was found or asked for`, {
              hint: 'run `plinth plugins list --all` to see every plugin found',
            });
          }
          const status = kernel.status().find((p) => p.name === name);
          if (json) return out.json({ ...explanation, status });
          out.print(formatExplanation(explanation, status));
        },
      });

      registry.add({
        name: 'config show',
        run({ json, out }) {
          // Plugins' own sections may hold a credential written out literally (an `Authorization` header): masked for display.
          const { files, profile, settings, problems } = kernel.inspect().config;
          const config = { files, profile, settings: maskCredentialKeys(settings), problems: configProblems(problems, kernel.configLayers) };
          if (json) return out.json(config);
          for (const file of config.files) out.print(`${file.scope}: ${safeLine(file.file)}${file.exists ? '' : ' (absent)'}`);
          out.print(`profile: ${config.profile ?? '(none)'}`);
          out.print(JSON.stringify(config.settings, null, 2));
        },
      });

      registry.add({
        name: 'config validate',
        async run({ json, out }) {
          // Settings that break the schema never get here: loading them fails first, with exit 3 and each JSON path.
          const { files, profile, problems: errors } = kernel.inspect().config;
          // The kernel's checks, then what each plugin owning a section (hooks, mcpServers, …) finds in it.
          const problems = [...configProblems(errors, kernel.configLayers), ...(await kernel.validateSettings())];
          const valid = problems.length === 0;
          if (json) out.json({ valid, files, profile, problems });
          else out.print(formatProblems(files, problems));
          return valid ? EXIT.OK : EXIT.CONFIG;
        },
      });
    });
  },
});
