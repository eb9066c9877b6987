/**
 * A third party builds on `plinth/sdk` alone: a plugin, an MCP transport and a
 * secret store (test/fixtures/third-party/), each its own package, are
 * compiled with tsc (strict) against the packed `plinth` tarball in a folder
 * outside the repository, then a host there (`import { createKernel } from
 * 'plinth'`) runs them as a child process: a gate event blocked by the
 * plugin, the builtin mcp plugin calling a real MCP server through the
 * third-party transport, a sensitive setting stored in and read back from the
 * third-party store. What is under test is the tarball (`npm pack`), not a
 * link to this checkout: what `files` and `exports` leave out is out.
 *
 * The other half: nothing else is reachable. A plugin importing
 * `plinth/internal` does not load, Node refuses `plinth/internal` and deep
 * imports into the package, and tsc refuses them and a wrong use of the sdk.
 *
 * Offline: npm packs with a closed registry; plinth's runtime dependencies,
 * Node's types and the MCP SDK come from this checkout's node_modules as links
 * beside the extracted package (as npm would hoist them); the MCP server
 * listens on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { offlineNpmEnv } from './support/npm.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'third-party');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const exec = promisify(execFile);

/** The three packages the host runs, and the one that must not load. */
const PACKAGES = ['guard-plugin', 'tcp-transport', 'file-secrets'] as const;

/** Strict, as a careful author compiles. */
const COMPILER_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
};

let base: string; // the test's own folder: the tarball, npm's cache, the outside world
let outside: string; // the third party's folder: node_modules/plinth (the tarball), plugins/, host.ts
let workspace: string;
/** The user folder of each host run: its own, so that no test depends on another's settings. */
const homeOf = (mode: 'run' | 'load') => join(base, `home-${mode}`);
const SECRET = `tp-${randomBytes(12).toString('hex')}`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(file: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(file, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeout ?? 60_000, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: `${failed.stderr ?? ''}${typeof failed.code === 'string' ? ` (${failed.code})` : ''}` };
  }
}

/** tsc on one project folder of the outside world; what it printed. */
async function compile(dir: string, files: readonly string[], extra: Record<string, unknown> = {}): Promise<Run> {
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, ...extra }, files }));
  return run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir });
}

/** `node:fs`'s symlink of `target` at `link`, its parent folders made. */
function link(target: string, link: string): void {
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(target, link, 'dir');
}

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'sdk', 'index.d.ts'))) throw new Error('dist/ is not built: run `npm run build` first (npm test does)');
  base = mkdtempSync(join(tmpdir(), 'plinth-third-party-'));
  outside = join(base, 'outside');
  workspace = join(base, 'workspace');
  for (const dir of [outside, homeOf('run'), homeOf('load'), workspace]) mkdirSync(dir, { recursive: true });

  // The package as npm publishes it (no `prepare`: dist/ is built), unpacked as npm installs it.
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', base], { cwd: root, env: await offlineNpmEnv(join(base, 'npm')) });
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const plinth = join(outside, 'node_modules', 'plinth');
  mkdirSync(plinth, { recursive: true });
  const { extract } = await import('tar');
  await extract({ file: join(base, filename), cwd: plinth, strip: 1 });

  // plinth's runtime dependencies, hoisted beside it as npm would; Node's types for tsc.
  const manifest = JSON.parse(readFileSync(join(plinth, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
  const needed = [...Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }), '@types/node'];
  for (const name of needed) {
    const from = join(root, 'node_modules', name);
    if (existsSync(from)) link(from, join(outside, 'node_modules', name));
    else if (!Object.hasOwn(manifest.optionalDependencies ?? {}, name)) throw new Error(`${name} is not installed in ${root}`);
  }

  // The three packages, compiled one by one as their authors would, then the host against them.
  writeFileSync(join(outside, 'package.json'), JSON.stringify({ name: 'a-third-party-host', private: true, type: 'module', dependencies: { plinth: '0.1.0' } }));
  cpSync(fixtures, join(outside, 'plugins'), { recursive: true, filter: (source) => !source.endsWith('host.ts') });
  const compiled = await Promise.all(PACKAGES.map((name) => compile(join(outside, 'plugins', name), ['index.ts'], { declaration: true, outDir: 'dist', rootDir: '.' })));
  compiled.forEach((result, i) => {
    if (result.code !== 0 || result.stdout + result.stderr !== '') throw new Error(`tsc failed on ${PACKAGES[i]}:\n${result.stdout}${result.stderr}`);
  });
  cpSync(join(fixtures, 'host.ts'), join(outside, 'host.ts'));
  // The host with skipLibCheck off: every declaration file the packed package ships (and what they import) is checked once.
  const host = await compile(outside, ['host.ts'], { outDir: '.', rootDir: '.', skipLibCheck: false });
  if (host.code !== 0 || host.stdout + host.stderr !== '') throw new Error(`tsc failed on host.ts:\n${host.stdout}${host.stderr}`);
}, 120_000);

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

/** The host, run with node from the outside folder; its JSON report. */
async function host(mode: 'run' | 'load', folder: string): Promise<{ report: Record<string, unknown>; stdout: string; stderr: string }> {
  const home = homeOf(mode);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, TP_SECRET: SECRET, PLINTH_HOME: home };
  const result = await run(process.execPath, [join(outside, 'host.js'), mode, folder, home, workspace], { cwd: outside, env, timeout: 60_000 });
  if (result.code !== 0) throw new Error(`the host failed (${result.code}):\n${result.stderr}`);
  return { report: JSON.parse(result.stdout) as Record<string, unknown>, stdout: result.stdout, stderr: result.stderr };
}

describe('built outside the repository against the packed plinth, with plinth/sdk alone', () => {
  test('the outside world is the tarball: plinth is a folder of its own, not a link to this checkout', () => {
    const plinth = join(outside, 'node_modules', 'plinth');
    expect(lstatSync(plinth).isSymbolicLink()).toBe(false);
    expect(existsSync(join(plinth, '.git'))).toBe(false);
    expect(existsSync(join(plinth, 'dist', 'sdk', 'index.js'))).toBe(true);
    expect(existsSync(join(plinth, 'test'))).toBe(false);
    // Each package was emitted as JavaScript, with declarations.
    for (const name of PACKAGES) {
      expect(existsSync(join(outside, 'plugins', name, 'dist', 'index.js'))).toBe(true);
      expect(existsSync(join(outside, 'plugins', name, 'dist', 'index.d.ts'))).toBe(true);
    }
  });

  test('a host runs the three: the plugin blocks, the mcp plugin calls a real server through the transport, the store keeps a secret', async () => {
    const { report, stdout, stderr } = await host('run', join(outside, 'plugins'));
    const { states, rm, ls, mcp, secrets, shutdownErrors } = report as Record<string, Record<string, unknown>>;
    expect(states).toEqual({ 'tp-guard': 'active', 'tp-tcp-transport': 'lazy', 'tp-file-secrets': 'lazy' });

    // The plugin: before_tool blocked with its message, another tool let through.
    expect(rm).toMatchObject({ allow: false, messages: ['tp-guard: "rm" is not allowed here'], blockedBy: { plugin: 'tp-guard', fix: 'ask your administrator' } });
    expect(ls).toEqual({ allow: true });

    // The transport: connected, both tools listed, one called, the other blocked by the guard before the server saw it.
    expect(mcp).toMatchObject({ state: 'connected', tools: ['tcpdemo__add', 'tcpdemo__wipe'], add: { ok: true, text: '42' } });
    expect(mcp!.wipe).toMatchObject({ ok: false, error: { code: 'PLN_E_MCP_BLOCKED' } });
    expect((mcp!.wipe as { error: { message: string } }).error.message).toContain('tp-guard: "tcpdemo__wipe" is not allowed here');
    expect(mcp!.serverRan).toEqual(['add']);
    expect(mcp!.guardBlocked).toEqual(['rm', 'tcpdemo__wipe']);

    // The store: `ext config` of the sensitive setting went to it, oauth uses it, the next run reads the value back.
    expect(secrets).toMatchObject({ stored: 'secrets', shown: '[redacted]', keys: ['plugin-setting:tp-guard/apiKey'] });
    expect(secrets!.oauthStorage).toEqual({ preferred: 'tp-file', label: "tp-file-secrets' own file", keychain: { available: false, reason: 'tp-file-secrets keeps every secret in its own file' } });
    expect(secrets!.fingerprint).toBe(createHash('sha256').update(SECRET).digest('hex').slice(0, 12));
    const stored = JSON.parse(readFileSync(join(homeOf('run'), 'tp-file-secrets', 'store.json'), 'utf8')) as Record<string, string>;
    expect(stored).toEqual({ 'plugin-setting:tp-guard/apiKey': JSON.stringify(SECRET) });
    // Not the builtin store's folder, and the settings file holds a reference only.
    expect(existsSync(join(homeOf('run'), 'secrets'))).toBe(false);
    const settings = readFileSync(join(homeOf('run'), 'settings.json'), 'utf8');
    expect(JSON.parse(settings)).toMatchObject({ plugins: { 'tp-guard': { settings: { apiKey: { $secret: 'plugin-setting:tp-guard/apiKey' } } } } });

    // The secret is never printed: not by the host's report, the kernel's debug log, nor stderr.
    expect((report.logs as string[]).length).toBeGreaterThan(10);
    expect(stdout).not.toContain(SECRET);
    expect(stderr).not.toContain(SECRET);
    expect(settings).not.toContain(SECRET);
    expect(shutdownErrors).toEqual([]);
  });
  test("plinth's own command, from the tarball, names the third-party store where a person reads it (auth status)", async () => {
    const home = join(base, 'home-cli');
    mkdirSync(home, { recursive: true });
    const settings = {
      pluginDirs: [join(outside, 'plugins', 'file-secrets')],
      services: { secrets: 'tp-file-secrets' },
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } },
    };
    writeFileSync(join(home, 'settings.json'), JSON.stringify(settings));
    const bin = join(outside, 'node_modules', 'plinth', 'dist', 'cli', 'bin.js');
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, PLINTH_HOME: home };
    const status = await run(process.execPath, [bin, 'auth', 'status'], { cwd: workspace, env, timeout: 60_000 });
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    // Its label, and no word of an OS keychain it never uses.
    expect(status.stdout).toContain("New sign-ins are stored in tp-file-secrets' own file.");
    expect(status.stdout).not.toContain('keychain');
    const asJson = await run(process.execPath, [bin, 'auth', 'status', '--json'], { cwd: workspace, env, timeout: 60_000 });
    expect(JSON.parse(asJson.stdout)).toMatchObject({ storage: { preferred: 'tp-file', label: "tp-file-secrets' own file" } });
  });
});

describe('nothing else is reachable', () => {
  test('a plugin importing plinth/internal does not load: PLN_E_PLUGIN_IMPORT, naming the module', async () => {
    const { report } = await host('load', join(outside, 'plugins', 'internal-plugin'));
    const plugin = report.plugin as { name: string; state: string; error?: { code: string; message: string; hint?: string } };
    expect(plugin).toMatchObject({ name: 'tp-reaches-inside', state: 'failed', error: { code: 'PLN_E_PLUGIN_IMPORT' } });
    // The failure is the package's "exports" (Node's words), not a missing package: plinth/sdk beside it resolved.
    expect(plugin.error!.message).toContain(`Package subpath './internal' is not defined by "exports" in ${join(outside, 'node_modules', 'plinth', 'package.json')}`);
    expect(plugin.error!.hint).toBe('a plugin imports plinth as "plinth/sdk" only: "plinth/internal" and paths inside the package are plinth\'s own');
    expect((report.logs as string[]).join('\n')).not.toContain('internal exports');
  });

  test.each([['plinth/internal'], ['plinth/dist/internal/index.js'], ['plinth/sdk/errors.js'], ['plinth/dist/kernel/kernel.js'], ['plinth/internal/index.ts']])(
    'node refuses import("%s") from outside: ERR_PACKAGE_PATH_NOT_EXPORTED',
    async (specifier) => {
      const probe = `import(${JSON.stringify(specifier)}).then(() => console.log('loaded'), (e) => console.log(e.code));`;
      const result = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: outside });
      expect(result.stdout.trim()).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    },
  );

  test('the check is real: the public entry points load from the same folder', async () => {
    const probe = "Promise.all(['plinth', 'plinth/sdk', 'plinth/testing'].map((s) => import(s))).then((m) => console.log(m.map((x) => typeof Object.values(x)[0]).join(' ')), (e) => console.log(e.code));";
    const result = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: outside });
    expect(result.stdout.trim()).toMatch(/^\w+ \w+ \w+$/);
    expect(result.stdout).not.toContain('ERR_');
  });

  test('tsc refuses plinth/internal and deep imports, and a wrong use of the sdk', async () => {
    const dir = join(outside, 'wrong');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'reach.ts'),
      ["import * as internal from 'plinth/internal';", "import { PlinthError } from 'plinth/sdk/errors.js';", 'export const reached = [internal, PlinthError];', ''].join('\n'),
    );
    writeFileSync(
      join(dir, 'misuse.ts'),
      [
        "import { type TransportFactory, definePlugin } from 'plinth/sdk';",
        'export default definePlugin({',
        '  setup(kernel) {',
        '    // create() must return a connection holding an SDK Transport, not a string',
        "    const factory: TransportFactory = { create: () => 'not a transport' };",
        "    kernel.provide('transport:stdio', factory);",
        '  },',
        '});',
        '',
      ].join('\n'),
    );
    const reach = await compile(dir, ['reach.ts'], { noEmit: true });
    expect(reach.code).not.toBe(0);
    expect(reach.stdout).toMatch(/reach\.ts\(1,.*TS2307.*'plinth\/internal'/);
    expect(reach.stdout).toMatch(/reach\.ts\(2,.*TS2307.*'plinth\/sdk\/errors\.js'/);
    const misuse = await compile(dir, ['misuse.ts'], { noEmit: true });
    expect(misuse.code).not.toBe(0);
    // TS2322: the string is not a TransportConnection, which needs the contract's real type (not any).
    expect(misuse.stdout).toContain('TS2322');
    expect(misuse.stdout).toContain('TransportConnection');
  });
});
