/**
 * A plugin made by `plinth plugin new` passes its own test and type check with
 * exactly the commands `plinth plugin new` prints, run as a person runs them:
 * outside the repository (a project in the temporary folder, PLINTH_HOME
 * elsewhere, the `plinth` installed with `npm install -g .`) and inside it (a
 * folder in the clone, under its package.json, tsconfig and vitest config).
 * npm is offline for real (support/npm.ts): the project's dependencies must
 * all be links to the host's install.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, ROOT, type Result, describeRun, ensureBuilt } from './support/cli.js';
import { scaffoldPlugin } from '../plugins/scaffold/scaffold.js';
import { installGlobally, offlineNpmEnv, shell } from './support/npm.js';

const TEST_TIMEOUT = 300_000;
let base: string;
let plinth: string;
/** Inside the repository, but not where plinth or the repository's own tests look for anything. */
const inside = join(ROOT, `.scaffold-test-${process.pid}`);

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-scaffold-'));
  expect(base.startsWith(ROOT)).toBe(false);
  const installed = await installGlobally(base);
  expect(installed.result.code, describeRun(installed.result)).toBe(0);
  plinth = installed.bin;
}, TEST_TIMEOUT);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
  await rm(inside, { recursive: true, force: true });
});

interface Created {
  dir: string;
  files: string[];
  next: string[];
  fromRegistry: string[];
}

/** Runs each command `plinth plugin new` printed, in order, in the plugin's folder; the last result. */
async function runPrinted(created: Created, env: NodeJS.ProcessEnv): Promise<Result[]> {
  const results: Result[] = [];
  for (const command of created.next) {
    const result = await shell(command, created.dir, env);
    expect(result.code, `${command}\n${describeRun(result)}`).toBe(0);
    results.push(result);
  }
  return results;
}

const PROJECT_FILES = ['.gitignore', '.npmrc', 'README.md', 'index.test.ts', 'index.ts', 'manifest.json', 'package.json', 'tsconfig.json', 'vitest.config.ts'];

describe('a scaffolded plugin tests itself', () => {
  test('outside the repository, with the installed plinth: the printed commands install, test and type-check it, offline', async () => {
    const env = await offlineNpmEnv(base, { PLINTH_HOME: join(base, 'home') });
    const project = join(base, 'project');
    await mkdir(project, { recursive: true });

    // What a person reads, then what a script reads: the same commands.
    const printed = await shell(`'${plinth}' plugin new shown-plugin --dir src`, project, env);
    expect(printed.code, describeRun(printed)).toBe(0);
    expect(printed.stdout).toContain('`cd src/shown-plugin && npm install && npm test && npm run typecheck`');
    expect(printed.stdout).toContain('no download');

    // In the workspace's .plinth/plugins, where `plinth up` finds it, approved as created.
    const asJson = await shell(`'${plinth}' plugin new my-plugin --json`, project, env);
    expect(asJson.code, describeRun(asJson)).toBe(0);
    const created = JSON.parse(asJson.stdout) as Created & { approved: boolean };
    expect(created.dir).toBe(join(project, '.plinth', 'plugins', 'my-plugin'));
    expect(created.approved).toBe(true);
    expect((await readdir(created.dir)).sort()).toEqual(PROJECT_FILES);
    expect(created.next).toEqual(['npm install', 'npm test', 'npm run typecheck']);
    expect(created.fromRegistry).toEqual([]);
    // plinth itself is a link to the install that created it: `plinth/sdk` is that plinth's sdk.
    const pkg = JSON.parse(readFileSync(join(created.dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies.plinth).toMatch(/^file:\//);

    const [, tested] = await runPrinted(created, env);
    expect(tested!.stdout).toMatch(/Tests\s+2 passed \(2\)/);
    expect(tested!.stdout).toContain('index.test.ts');

    // npm install wrote node_modules (not fingerprinted) and no lock file: the approval still holds.
    expect(existsSync(join(created.dir, 'package-lock.json'))).toBe(false);
    const up = await shell(`'${plinth}' up --once --json`, project, env);
    expect(up.code, describeRun(up)).toBe(0);
    const plugins = (JSON.parse(up.stdout) as { plugins: { name: string; state: string; source: string }[] }).plugins;
    expect(plugins.find((p) => p.name === 'my-plugin')).toMatchObject({ state: 'active', source: 'workspace' });

    // The type check sees the sdk's real types: a wrong decision does not pass.
    await writeFile(join(created.dir, 'index.ts'), "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup(kernel) { kernel.on('before_tool', () => ({ allow: 'no' })); } });\n");
    const typeError = await shell('npm run typecheck', created.dir, env);
    expect(typeError.code, describeRun(typeError)).not.toBe(0);
    expect(typeError.stdout + typeError.stderr).toMatch(/index\.ts.*error TS/);
  }, TEST_TIMEOUT);

  test('inside the repository, under its package.json, tsconfig and vitest config: the same commands pass', async () => {
    const env = await offlineNpmEnv(base, { PLINTH_HOME: join(base, 'home-inside') });
    const created = await shell(`'${process.execPath}' '${BIN}' plugin new inner-plugin --dir '${inside}' --json`, ROOT, env);
    expect(created.code, describeRun(created)).toBe(0);
    const body = JSON.parse(created.stdout) as Created;
    expect(body.dir).toBe(join(inside, 'inner-plugin'));

    const [, tested, typed] = await runPrinted(body, env);
    // Its own test only: not the repository's suite, which the parent vitest config would pick.
    expect(tested!.stdout).toMatch(/Test Files\s+1 passed \(1\)/);
    expect(tested!.stdout).toMatch(/Tests\s+2 passed \(2\)/);
    expect(typed!.code).toBe(0);
  }, TEST_TIMEOUT);

  test('a host installed without its dev dependencies: the tools come from the registry, in plinth\'s own ranges, and the result says so', async () => {
    const host = join(base, 'bare-host');
    await mkdir(host, { recursive: true });
    await writeFile(join(host, 'package.json'), JSON.stringify({ name: 'plinth', version: '9.9.9', devDependencies: { vitest: '~4.1', typescript: '^7.0.2', '@types/node': '^20.19.0' } }));
    const created = await scaffoldPlugin({ name: 'bare-plugin', parent: join(base, 'bare'), host });
    expect(created.fromRegistry).toEqual(['vitest', 'typescript', '@types/node']);
    const pkg = JSON.parse(readFileSync(join(created.dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies).toEqual({ plinth: `file:${realpathSync(host)}`, vitest: '~4.1', typescript: '^7.0.2', '@types/node': '^20.19.0' });
  });
});
