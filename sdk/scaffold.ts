/** `plinth plugin new`: a plugin folder that loads into `plinth up` unchanged, with a passing test. */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { PlinthError } from '../kernel/errors.js';
import { KERNEL_API_VERSION } from '../kernel/version.js';
import { pluginName } from './manifest.js';

export interface ScaffoldOptions {
  /** The plugin's npm-style name. */
  name: string;
  /** The folder to create the plugin folder in. */
  parent: string;
  description?: string;
}

/** Writes `<parent>/<name>/` with manifest.json, index.ts, index.test.ts and README.md; returns the folder. */
export async function scaffoldPlugin(options: ScaffoldOptions): Promise<{ dir: string; files: string[] }> {
  const name = pluginName.safeParse(options.name);
  if (!name.success) {
    throw new PlinthError('PLN_E_SCAFFOLD_NAME', `"${options.name}" is not a valid plugin name: ${name.error.issues[0]?.message ?? 'invalid'}`, {
      hint: 'use lowercase letters, digits and dashes, e.g. my-plugin or @me/my-plugin',
    });
  }
  const dir = resolve(options.parent, options.name);
  const existing = await readdir(dir).catch(() => [] as string[]);
  if (existing.length > 0) {
    throw new PlinthError('PLN_E_SCAFFOLD_EXISTS', `${dir} already exists and is not empty`, {
      hint: 'choose another name or --dir, or remove the folder',
    });
  }
  await mkdir(dir, { recursive: true });
  const description = options.description ?? `The ${options.name} plugin.`;
  const files: Record<string, string> = {
    'manifest.json': `${JSON.stringify(
      {
        name: options.name,
        version: '0.1.0',
        description,
        kernel: `^${semver.major(KERNEL_API_VERSION)}.0.0`,
        main: './index.ts',
        events: ['session_start', 'before_tool'],
        settings: [{ name: 'blockedTools', type: 'array', default: [], description: 'Tool names this plugin refuses to run' }],
      },
      null,
      2,
    )}\n`,
    'index.ts': INDEX,
    'index.test.ts': TEST.replaceAll('__NAME__', options.name),
    'README.md': README.replaceAll('__NAME__', options.name).replace('__DESCRIPTION__', description),
  };
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return { dir, files: Object.keys(files) };
}

const INDEX = `import { definePlugin } from 'plinth/sdk';

export default definePlugin({
  setup(kernel, ctx) {
    const blocked = new Set(ctx.settings.blockedTools as string[]);

    kernel.on('session_start', () => ({ systemMessage: \`\${ctx.name} is active\` }));

    kernel.on('before_tool', (context) => {
      if (typeof context.tool === 'string' && blocked.has(context.tool)) {
        return { allow: false, message: \`\${context.tool} is blocked by \${ctx.name}\` };
      }
    });

    ctx.log.info('ready');
  },
});
`;

const TEST = `import { fileURLToPath } from 'node:url';
import { createTestKernel } from 'plinth/sdk';
import { afterEach, expect, test } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
let kernel: Awaited<ReturnType<typeof createTestKernel>> | undefined;
afterEach(() => kernel?.dispose());

test('adds a system message when a session starts', async () => {
  kernel = await createTestKernel({ pluginDirs: [here] });
  const decision = await kernel.emit('session_start', {});
  expect(decision.systemMessages).toContain('__NAME__ is active');
});

test('blocks the tools named in its settings', async () => {
  kernel = await createTestKernel({
    pluginDirs: [here],
    settings: { plugins: { '__NAME__': { settings: { blockedTools: ['rm'] } } } },
  });
  const decision = await kernel.emit('before_tool', { tool: 'rm' });
  expect(decision.allow).toBe(false);
  expect(decision.blockedBy?.plugin).toBe('__NAME__');
});
`;

const README = `# __NAME__

__DESCRIPTION__

## Settings

| setting | type | default | description |
|---|---|---|---|
| \`blockedTools\` | string[] | \`[]\` | Tool names this plugin refuses to run |

Set them in \`settings.json\`: \`{ "plugins": { "__NAME__": { "settings": { "blockedTools": ["rm"] } } } }\`.

## Events

- \`session_start\`: adds a system message.
- \`before_tool\`: blocks the tools in \`blockedTools\`.

## Develop

\`npx vitest run\` in this folder runs its test. \`plinth up\` loads it from \`.plinth/plugins/\` once it is approved:
\`plinth plugin new\` approved it as created, and after an edit plinth asks again on a terminal, or refuses it and
prints the command that approves it (\`plinth trust approve plugin __NAME__\`). While you work on it,
\`plinth up --plugin-dir <this folder>\` loads it without approval: a folder you name yourself is trusted.
`;
