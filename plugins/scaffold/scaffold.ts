/**
 * `plinth plugin new`: a plugin folder that loads into `plinth up` unchanged,
 * and a small npm project of its own whose test and type check pass, wherever
 * the folder is. Its dev dependencies are links to the running plinth's own
 * install (plinth itself, vitest, TypeScript, Node's types), so `npm install`
 * there needs no network and `plinth/sdk` is the sdk of the plinth that runs it.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import semver from 'semver';
import { KERNEL_API_VERSION, PlinthError } from 'plinth/sdk';
import { describeCause, pluginName } from 'plinth/internal';

export interface ScaffoldOptions {
  /** The plugin's npm-style name. */
  name: string;
  /** The folder to create the plugin folder in. */
  parent: string;
  description?: string;
  /** The plinth install the plugin's project links to; default: the running plinth's package folder. */
  host?: string;
}

/** What was created, and the commands (run in `dir`) that install, test and type-check it. */
export interface ScaffoldResult {
  readonly dir: string;
  readonly files: string[];
  /** `npm install`, `npm test`, `npm run typecheck`: exactly what `plinth plugin new` prints. */
  readonly next: string[];
  /** Dev dependencies that are not links to the host's install (it has no copy), so `npm install` downloads them. */
  readonly fromRegistry: string[];
}

/** The tools a plugin's test and type check need, next to plinth itself. */
const TOOLS = ['vitest', 'typescript', '@types/node'] as const;

/**
 * Writes `<parent>/<name>/`: manifest.json, index.ts, index.test.ts, README.md,
 * and its project (package.json, tsconfig.json, vitest.config.ts, .npmrc,
 * .gitignore); returns the folder and the commands to run there.
 */
export async function scaffoldPlugin(options: ScaffoldOptions): Promise<ScaffoldResult> {
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
  await makeFolders(dir);
  const description = options.description ?? `The ${options.name} plugin.`;
  const project = devDependencies(options.host ?? runningPlinth());
  const files: Record<string, string> = {
    'manifest.json': `${JSON.stringify(
      {
        name: options.name,
        version: '0.1.0',
        description,
        kernel: `^${semver.major(KERNEL_API_VERSION)}.0.0`,
        main: './index.ts',
        events: ['session_start', 'before_tool'],
        // It decides about tool calls: while it cannot run (edited and not approved again, a setup
        // error), the kernel blocks before_tool rather than let every tool through unguarded.
        guards: ['before_tool'],
        settings: [{ name: 'blockedTools', type: 'array', default: [], description: 'Tool names this plugin refuses to run' }],
      },
      null,
      2,
    )}\n`,
    'index.ts': INDEX,
    'index.test.ts': TEST.replaceAll('__NAME__', options.name),
    'README.md': README.replaceAll('__NAME__', options.name).replace('__DESCRIPTION__', description),
    'package.json': `${JSON.stringify(
      {
        name: options.name,
        version: '0.1.0',
        private: true,
        description,
        type: 'module',
        scripts: { test: 'vitest run', typecheck: 'tsc -p tsconfig.json' },
        devDependencies: project.dependencies,
      },
      null,
      2,
    )}\n`,
    'tsconfig.json': TSCONFIG,
    'vitest.config.ts': VITEST_CONFIG,
    // The links need no lock, and a lock file written by `npm install` would change the
    // folder that was approved as created: plinth would ask again before loading it.
    '.npmrc': 'package-lock=false\nfund=false\n',
    '.gitignore': 'node_modules/\n',
  };
  for (const [file, text] of Object.entries(files)) {
    await writeFile(join(dir, file), text).catch((error: unknown) => {
      throw targetError(dir, `cannot write ${join(dir, file)}: ${whyNot(error, dir)}`, error);
    });
  }
  return { dir, files: Object.keys(files), next: ['npm install', 'npm test', 'npm run typecheck'], fromRegistry: project.fromRegistry };
}

/**
 * Creates `dir` and its missing parents, one level at a time, or fails at once
 * with PLN_E_SCAFFOLD_TARGET naming what is in the way. Not
 * `mkdir(dir, { recursive: true })`: Node 20's spins for ever under a folder
 * that refuses new entries with ENOENT although it exists (/proc), and its
 * errors name only the deepest path, not the file or read-only folder that is the cause.
 */
async function makeFolders(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    let kind: 'folder' | 'file' | 'none';
    try {
      kind = (await stat(at)).isDirectory() ? 'folder' : 'file';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ENOTDIR: a file further up is in the way; found when the walk reaches it.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw targetError(dir, `cannot look at ${at}: ${whyNot(error, dirname(at))}`, error);
      kind = 'none';
    }
    if (kind === 'file') throw targetError(dir, `${at} is a file, not a folder`);
    if (kind === 'folder') break;
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const folder of missing) {
    try {
      await mkdir(folder);
    } catch (error) {
      // Made meanwhile by someone else: fine if it is a folder (the writes say otherwise).
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw targetError(dir, `cannot create the folder ${folder}: ${whyNot(error, dirname(folder))}`, error);
    }
  }
}

/** Why a folder or file could not be made in `parent`, in words. */
function whyNot(error: unknown, parent: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied in ${parent}`;
  if (code === 'EROFS') return `${parent} is on a read-only file system`;
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'no space left on the disk';
  // The parent exists (it was looked at) yet "does not exist": a file system that takes no new entries.
  if (code === 'ENOENT') return `${parent} does not take new folders or files (a virtual file system such as /proc or /sys)`;
  return describeCause(error);
}

function targetError(dir: string, problem: string, cause?: unknown): PlinthError {
  return new PlinthError('PLN_E_SCAFFOLD_TARGET', `cannot create the plugin in ${dir}: ${problem}`, {
    hint: "choose a --dir that is a folder you can write to (the default is the workspace's .plinth/plugins), or fix the one named",
    ...(cause !== undefined && { cause }),
    details: { dir },
  });
}

/** The package folder of the running plinth, from source or from dist/ alike: the package names itself. */
function runningPlinth(): string {
  return dirname(createRequire(import.meta.url).resolve('plinth/package.json'));
}

/**
 * `file:` links to plinth and to the host's own copies of the tools; a tool the
 * host does not have (installed without its dev dependencies) comes from the
 * registry, in the range plinth itself develops with.
 */
function devDependencies(host: string): { dependencies: Record<string, string>; fromRegistry: string[] } {
  const root = realpathSync(host);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const dependencies: Record<string, string> = { plinth: `file:${root}` };
  const fromRegistry: string[] = [];
  for (const tool of TOOLS) {
    const local = join(root, 'node_modules', tool);
    if (existsSync(join(local, 'package.json'))) dependencies[tool] = `file:${realpathSync(local)}`;
    else {
      dependencies[tool] = pkg.devDependencies?.[tool] ?? 'latest';
      fromRegistry.push(tool);
    }
  }
  return { dependencies, fromRegistry };
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

const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      verbatimModuleSyntax: true,
    },
    include: ['**/*.ts'],
    exclude: ['node_modules'],
  },
  null,
  2,
)}\n`;

const VITEST_CONFIG = `import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// This folder is the project, whatever folder holds it: its own tests, not a parent's.
export default defineConfig({
  test: { root: fileURLToPath(new URL('.', import.meta.url)), include: ['**/*.test.ts'] },
});
`;

const TEST = `import { fileURLToPath } from 'node:url';
import { createTestKernel } from 'plinth/testing';
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

The manifest lists \`before_tool\` in \`guards\`: while this plugin cannot run (after an edit it is refused until
approved again; a setup error; a bad setting), plinth blocks every \`before_tool\` with \`PLN_E_GUARD_UNAVAILABLE\`
and the fix, instead of letting tools through unguarded. Remove the line only if the plugin stops deciding about
tool calls.

## Develop

\`\`\`sh
npm install         # links plinth, vitest and TypeScript from the plinth that created this folder
npm test            # runs index.test.ts
npm run typecheck   # checks the types, \`plinth/sdk\` included
\`\`\`

\`package.json\` links to that plinth's install by its path (\`file:…\`): if it moves, change the paths and run
\`npm install\` again. \`plinth up\` loads the plugin from \`.plinth/plugins/\` once it is approved:
\`plinth plugin new\` approved it as created, and after an edit plinth asks again on a terminal, or refuses it and
prints the command that approves it (\`plinth trust approve plugin __NAME__\`). While you work on it,
\`plinth up --plugin-dir <this folder>\` loads it without approval: a folder you name yourself is trusted.
`;
