/**
 * `auto` against real servers of each era (test/fixtures/mcp/servers/era-server.mjs):
 * over stdio the SDK probes plinth's own transport in place (one spawn per
 * start, counted by the server itself), a legacy server that exits on the
 * probe is started once more as a legacy one (and only it); the verdict is
 * kept across runs in the plinth home (`mcp-eras.json`), and a server that
 * changes era between runs is connected each time while the record follows it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpService } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { ROOT, ensureBuilt, run, sandbox, describeRun, type Sandbox } from './support/cli.js';

const ERA_SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'era-server.mjs');
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const kernels: TestKernel[] = [];
const folders: string[] = [];
const children: ChildProcess[] = [];
let scratch = '';

beforeAll(async () => {
  ensureBuilt();
  scratch = await mkdtemp(join(tmpdir(), 'plinth-eras-auto-'));
  folders.push(scratch);
});

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function boot(mcpServers: Record<string, unknown>): Promise<McpService> {
  const kernel = await createTestKernel({ builtin: true, settings: { mcpServers, plugins: { ...QUIET, mcp: { settings: { protocol: 'auto' } } } } });
  kernels.push(kernel);
  return kernel.get('mcp');
}

let n = 0;
/** A fresh spawn log; its lines once read. */
function spawnLog(): { file: string; lines: () => Promise<string[]> } {
  const file = join(scratch, `spawns-${++n}.log`);
  return { file, lines: async () => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean) };
}

const stdio = (args: string[]) => ({ command: process.execPath, args: [ERA_SERVER, ...args] });

describe('auto over stdio: probed on the process that is kept', () => {
  it.each([
    ['modern', 'modern', '2026-07-28'],
    ['dual', 'modern', '2026-07-28'],
    ['legacy', 'legacy', '2025-11-25'],
  ])('a %s server: era %s (%s), one spawn, tools, resources, templates, prompts and completions work', async (era, expected, version) => {
    const log = spawnLog();
    const mcp = await boot({ s: stdio(['--era', era, '--spawn-log', log.file]) });
    expect(await mcp.start('s', { retries: 0 })).toMatchObject({ state: 'connected', era: expected, protocolVersion: version });
    expect(await mcp.callTool('s__echo', { text: 'hi' })).toMatchObject({ ok: true, text: `${era}: hi` });
    expect((await mcp.resources('s')).map((r) => r.uri)).toEqual(['era://info']);
    expect((await mcp.readResource('s', 'era://info')).text).toContain(era);
    expect((await mcp.resourceTemplates('s')).map((t) => t.uriTemplate)).toEqual(['era://items/{id}']);
    expect((await mcp.readResource('s', 'era://items/apple')).text).toContain('item apple');
    expect((await mcp.getPrompt('s', 'greet', { name: 'Ada' })).text).toContain(`Hello Ada (${era})`);
    expect(await mcp.complete('s', { type: 'prompt', name: 'greet' }, { name: 'name', value: 'A' })).toEqual(['Ada', 'Alan']);
    expect(await mcp.complete('s', { type: 'resource', uri: 'era://items/{id}' }, { name: 'id', value: 'ap' })).toEqual(['apple', 'apricot']);
    expect(await log.lines()).toHaveLength(1);
  });

  it('a legacy server that exits on the probe is started once more as legacy: two spawns, connected; "legacy" mode spawns it once', async () => {
    const log = spawnLog();
    const mcp = await boot({ auto: stdio(['--era', 'legacy', '--exit-on-probe', '--spawn-log', log.file]) });
    expect(await mcp.start('auto', { retries: 0 })).toMatchObject({ state: 'connected', era: 'legacy' });
    expect(await mcp.callTool('auto__echo', { text: 'x' })).toMatchObject({ ok: true, text: 'legacy: x' });
    expect(await log.lines()).toHaveLength(2);

    const once = spawnLog();
    const legacy = await boot({ old: { ...stdio(['--era', 'legacy', '--exit-on-probe', '--spawn-log', once.file]), protocol: 'legacy' } });
    expect(await legacy.start('old', { retries: 0 })).toMatchObject({ state: 'connected', era: 'legacy' });
    expect(await once.lines()).toHaveLength(1);
  });

  it('a legacy server that never answers the probe: the probe\'s share of the connection timeout runs out, initialize on the same process', async () => {
    const log = spawnLog();
    const mcp = await boot({ quiet: { ...stdio(['--era', 'legacy', '--silent-probe', '--spawn-log', log.file]), timeout: 3000 } });
    expect(await mcp.start('quiet', { retries: 0 })).toMatchObject({ state: 'connected', era: 'legacy', protocolVersion: '2025-11-25' });
    expect(await mcp.callTool('quiet__echo', { text: 'x' })).toMatchObject({ ok: true, text: 'legacy: x' });
    expect(await log.lines()).toHaveLength(1);
  });

  it('outside auto, a server that exits on its first message is started once (the second start is auto\'s, for the probe only)', async () => {
    const log = spawnLog();
    const script = join(scratch, 'dies.mjs');
    await writeFile(script, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(log.file)}, 'x\\n');\nprocess.stdin.once('data', () => process.exit(7));\n`);
    const mcp = await boot({ dies: { command: process.execPath, args: [script], protocol: 'legacy' } });
    const status = await mcp.start('dies', { retries: 0 });
    expect(status.state).toBe('error');
    expect(await log.lines()).toHaveLength(1);
  });
});

/** An era server over HTTP on `port` (0: a free one); its URL. */
async function httpServer(era: string, port: number, hits: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [ERA_SERVER, '--era', era, '--http', '--port', String(port), '--hits', hits], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the era server exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

describe('the verdict across runs (plinth mcp status --json, one home)', () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await sandbox('plinth-eras-');
    folders.push(box.base);
  });

  const status = async (name: string) => {
    const result = await run(box, ['mcp', 'status', name, '--json']);
    const parsed = JSON.parse(result.stdout || '{}') as { servers?: Array<Record<string, unknown>> };
    const server = parsed.servers?.find((s) => s.name === name);
    expect(server, describeRun(result)).toBeDefined();
    return server!;
  };
  const record = async () => {
    const text = await readFile(join(box.home, 'mcp-eras.json'), 'utf8');
    return Object.values((JSON.parse(text) as { servers: Record<string, { era: string }> }).servers).map((v) => v.era);
  };

  it('stdio: modern, then legacy, then modern again: connected each run, the record follows', async () => {
    const eraFile = join(scratch, 'era.txt');
    const log = spawnLog();
    await box.settings({ mcpServers: { changing: { ...stdio(['--era-file', eraFile, '--spawn-log', log.file]), protocol: 'auto' } }, plugins: QUIET });

    await writeFile(eraFile, 'modern');
    expect(await status('changing')).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: '2026-07-28' });
    expect(await record()).toEqual(['modern']);

    await writeFile(eraFile, 'legacy');
    expect(await status('changing')).toMatchObject({ state: 'connected', era: 'legacy', protocolVersion: '2025-11-25' });
    expect(await record()).toEqual(['legacy']);

    // Known legacy: no probe, `initialize` at once; the modern-only server refuses it, and is asked again.
    await writeFile(eraFile, 'modern');
    const before = (await log.lines()).length;
    expect(await status('changing')).toMatchObject({ state: 'connected', era: 'modern' });
    expect(await record()).toEqual(['modern']);
    expect((await log.lines()).length - before).toBe(2);
  });

  it('mcp status and mcp get show the era and the revision, in text and in --json', async () => {
    await box.settings({ mcpServers: { dual: { ...stdio(['--era', 'dual']), protocol: 'auto' }, old: { ...stdio(['--era', 'dual']), protocol: 'legacy' } }, plugins: QUIET });
    const text = await run(box, ['mcp', 'status']);
    expect(text.stdout, describeRun(text)).toMatch(/dual .*era-dual 1\.0\.0, MCP 2026-07-28 \(modern\)/);
    expect(text.stdout).toMatch(/old .*era-dual 1\.0\.0, MCP 2025-11-25 \(legacy\)/);
    const got = await run(box, ['mcp', 'get', 'dual']);
    expect(got.stdout, describeRun(got)).toMatch(/protocol\s+auto/);
    expect(got.stdout).toMatch(/state\s+connected \(.*MCP 2026-07-28 \(modern\)\)/);
    const json = JSON.parse((await run(box, ['mcp', 'get', 'old', '--json'])).stdout) as { server: { protocol: string }; status: { era: string; protocolVersion: string } };
    expect(json.server.protocol).toBe('legacy');
    expect(json.status).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25' });
  });

  it('HTTP: modern, then legacy (known legacy: no probe), then modern again: connected each run, the record follows', async () => {
    await rm(join(box.home, 'mcp-eras.json'), { force: true });
    const hits = join(scratch, 'hits.log');
    let server = await httpServer('modern', 0, hits);
    const port = Number(new URL(server.url).port);
    const methods = async () => (await readFile(hits, 'utf8')).split('\n').filter(Boolean);
    await box.settings({ mcpServers: { remote: { url: server.url, protocol: 'auto' } }, plugins: QUIET });

    expect(await status('remote')).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: '2026-07-28', transport: 'http' });
    expect((await methods())[0]).toBe('server/discover');
    expect(await record()).toEqual(['modern']);

    await stopped(server.child);
    server = await httpServer('legacy', port, hits);
    expect(await status('remote')).toMatchObject({ state: 'connected', era: 'legacy', protocolVersion: '2025-11-25' });
    expect(await record()).toEqual(['legacy']);

    // A fresh legacy verdict: the next run sends no probe at all.
    await writeFile(hits, '');
    expect(await status('remote')).toMatchObject({ state: 'connected', era: 'legacy' });
    expect(await methods()).not.toContain('server/discover');

    // The server turned modern-only: the remembered verdict's `initialize` is refused (-32022), the era asked again.
    await stopped(server.child);
    server = await httpServer('modern', port, hits);
    expect(await status('remote')).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: '2026-07-28' });
    expect(await record()).toEqual(['modern']);
    await stopped(server.child);
  });
});
