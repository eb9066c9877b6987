import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { type PluginKernel, definePlugin, parseManifest } from 'plinth/sdk';
import { scaffoldPlugin } from './scaffold.js';

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
          const workspacePlugins = join(ctx.paths.workspace, '.plinth', 'plugins');
          const parent = typeof options.dir === 'string' ? options.dir : workspacePlugins;
          const created = await scaffoldPlugin({
            name: args[0]!,
            parent,
            ...(typeof options.description === 'string' && { description: options.description }),
          });
          // A workspace plugin needs approval before plinth imports it; the person who
          // just created it does not need to be asked about their own files.
          const approval = resolve(parent) === resolve(workspacePlugins) ? await approveCreated(kernel, created.dir) : undefined;
          if (json) return out.json({ ...created, approved: approval?.fingerprint !== undefined });
          const name = args[0]!;
          out.print(`Created ${relative(process.cwd(), created.dir) || '.'}/ with ${created.files.join(', ')}.`);
          if (approval?.fingerprint !== undefined) {
            out.print(`Approved it as it is now (fingerprint ${approval.fingerprint.slice(0, 12)}), since you created it: \`plinth up\` loads it from there.`);
            out.print(`After you edit it, plinth asks again, or run \`plinth trust approve plugin ${name}\` once it was refused.`);
          } else if (approval) {
            out.print(`Not approved (${approval.problem}): plinth refuses workspace plugins until they are approved.`);
          } else {
            out.print('`plinth up` loads it from there (with --plugin-dir, when the folder is not a plugin folder plinth searches).');
          }
          const links = created.fromRegistry.length > 0 ? ` (${created.fromRegistry.join(', ')} from the npm registry: this plinth has no copy)` : ' (links to this plinth\'s install, no download)';
          out.print(`Its test: \`cd ${relative(process.cwd(), created.dir) || '.'} && ${created.next.join(' && ')}\`${links}.`);
        },
      }),
    );
  },
});

/** Records approval of the plugin just created in the workspace; says why not when it cannot. */
async function approveCreated(kernel: PluginKernel, dir: string): Promise<{ fingerprint?: string; problem?: string }> {
  try {
    const parsed = parseManifest(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')));
    if (!parsed.ok) return { problem: 'its manifest is invalid' };
    const { manifest } = parsed;
    const trust = await kernel.get('trust');
    const subject = await trust.pluginSubject({ name: manifest.name, version: manifest.version, dir, manifest }, 'workspace');
    return { fingerprint: (await trust.approve(subject)).fingerprint };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}
