import { join, relative } from 'node:path';
import { definePlugin, scaffoldPlugin } from 'plinth/sdk';

export default definePlugin({
  setup(kernel, ctx) {
    kernel.hooks.commands.tap((registry) =>
      registry.add({
        name: 'plugin new',
        args: [{ name: 'name', required: true, description: 'npm-style plugin name, e.g. my-plugin' }],
        options: {
          dir: { type: 'string', description: 'Folder to create it in (default: <workspace>/.plinth/plugins)' },
          description: { type: 'string', description: 'One line for the manifest and README' },
        },
        async run({ args, options, json, out }) {
          const parent = typeof options.dir === 'string' ? options.dir : join(ctx.paths.workspace, '.plinth', 'plugins');
          const created = await scaffoldPlugin({
            name: args[0]!,
            parent,
            ...(typeof options.description === 'string' && { description: options.description }),
          });
          if (json) return out.json(created);
          out.print(`Created ${relative(process.cwd(), created.dir) || '.'}/ with ${created.files.join(', ')}.`);
          out.print('`plinth up` loads it from there; `npx vitest run` in that folder runs its test.');
        },
      }),
    );
  },
});
