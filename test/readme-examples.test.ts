/**
 * The README's code that a user runs, run for real, as the user would: in a project of its own
 * outside the repository that depends on this checkout the way the README says (`npm install
 * /path/to/plinth`, offline: support/npm.ts), with the built package. Each runnable block is
 * marked `<!-- example: <file> -->`: written to that file in the project (a `.sh` block is run line
 * by line). Every `ts` block of the README must be marked, so that a new one cannot go unrun.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, ROOT, describeRun, ensureBuilt } from './support/cli.js';
import { offlineNpmEnv, shell } from './support/npm.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const KERNEL_README = readFileSync(join(ROOT, 'kernel', 'README.md'), 'utf8');
const TEST_TIMEOUT = 120_000;

interface Block {
  readonly lang: string;
  readonly code: string;
  /** The marker's file name, when the block is marked runnable. */
  readonly file?: string;
}

/** Fenced blocks in order, each with the `<!-- example: file -->` marker on the line before it, if any. */
function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  const fence = /(?:<!-- example: (\S+) -->\n)?```(\w*)\n([\s\S]*?)\n```/g;
  for (const match of markdown.matchAll(fence)) found.push({ lang: match[2]!, code: `${match[3]!}\n`, ...(match[1] && { file: match[1] }) });
  return found;
}

function example(file: string, markdown = README): Block {
  const block = blocks(markdown).find((b) => b.file === file);
  if (!block) throw new Error(`the README has no block marked <!-- example: ${file} -->`);
  return block;
}

let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-readme-'));
}, 300_000);
afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

describe('README.md', () => {
  test('every ts block (of README.md and kernel/README.md) is marked as an example, and so is run below', () => {
    const unmarked = [...blocks(README), ...blocks(KERNEL_README)].filter((b) => b.lang === 'ts' && b.file === undefined);
    expect(unmarked.map((b) => b.code.split('\n')[0])).toEqual([]);
    expect(blocks(README).filter((b) => b.file !== undefined).length).toBeGreaterThanOrEqual(4);
  });

  test('the builtin plugin table lists every builtin plugin', () => {
    const table = README.slice(README.indexOf('### Builtin plugins'), README.indexOf('### Settings'));
    const listed = new Set([...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z0-9-]+)`/g)].map((n) => n[1]!)));
    const builtin = readdirSync(join(ROOT, 'plugins'), { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(join(ROOT, 'plugins', d.name, 'manifest.json'))).map((d) => d.name);
    expect(builtin.filter((name) => !listed.has(name))).toEqual([]);
  });

  test('a host project: install the checkout, write and test a plugin, embed the kernel', async () => {
    const project = join(base, 'host');
    const home = join(base, 'home');
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', private: true, type: 'module' }, null, 2));
    const env = await offlineNpmEnv(base, { PLINTH_HOME: home });

    // "Embedding the kernel": depend on the checkout.
    for (const line of example('install.sh').code.split('\n')) {
      const command = line.replace(/#.*$/, '').trim().replaceAll('/path/to/plinth', `'${ROOT}'`);
      if (command === '') continue;
      const ran = await shell(command, project, env);
      expect(ran.code, `${command}\n${describeRun(ran)}`).toBe(0);
    }
    expect(existsSync(join(project, 'node_modules', 'plinth', 'package.json'))).toBe(true);
    const plinth = (args: string) => shell(`'${process.execPath}' '${BIN}' ${args}`, project, env);

    // "Writing a plugin": scaffolded, its index.ts the README's, approved again after the edit.
    const created = await plinth('plugin new my-plugin');
    expect(created.code, describeRun(created)).toBe(0);
    const pluginFile = join(project, '.plinth', 'plugins', 'my-plugin', 'index.ts');
    expect(existsSync(pluginFile)).toBe(true);
    for (const file of ['.plinth/plugins/my-plugin/index.ts', 'my-plugin.test.mjs', 'host.mjs']) {
      await mkdir(dirname(join(project, file)), { recursive: true });
      await writeFile(join(project, file), example(file).code);
    }
    const approved = await plinth('trust approve plugin my-plugin');
    expect(approved.code, describeRun(approved)).toBe(0);

    // Its test with plinth/testing.
    const tested = await shell(`'${process.execPath}' my-plugin.test.mjs`, project, env);
    expect(tested.code, describeRun(tested)).toBe(0);
    expect(tested.stdout).toMatch(/# pass 1\b/);

    // The host: the kernel from `plinth`, every builtin plugin and the workspace's own; the plugin refuses rm.
    const hosted = await shell(`'${process.execPath}' host.mjs`, project, env);
    expect(hosted.code, describeRun(hosted)).toBe(0);
    for (const line of ['trust: active', 'hooks: active', 'my-plugin: active']) expect(hosted.stdout, describeRun(hosted)).toContain(line);
    expect(hosted.stderr, describeRun(hosted)).toContain('rm is not allowed here');

    // kernel/README.md: a plugin that checks the settings section it owns, asked by validateSettings().
    await mkdir(join(project, 'widgets'), { recursive: true });
    await writeFile(join(project, 'widgets', 'manifest.json'), JSON.stringify({ name: 'widgets', version: '1.0.0', kernel: '^1.0.0', main: './index.ts', configKeys: ['widgets'] }));
    await writeFile(join(project, 'widgets', 'index.ts'), example('widgets/index.ts', KERNEL_README).code);
    await writeFile(
      join(project, 'validate.mjs'),
      "import { createTestKernel } from 'plinth/testing';\nconst kernel = await createTestKernel({ pluginDirs: ['widgets'], settings: { widgets: { size: 'huge' } } });\nconsole.log(JSON.stringify(await kernel.validateSettings()));\nawait kernel.dispose();\n",
    );
    const validated = await shell(`'${process.execPath}' validate.mjs`, project, env);
    expect(validated.code, describeRun(validated)).toBe(0);
    expect(JSON.parse(validated.stdout)).toEqual([expect.objectContaining({ code: 'PLN_E_WIDGETS_SIZE', path: 'widgets.size', file: expect.stringMatching(/settings\.json$/) })]);
  }, TEST_TIMEOUT);
});
