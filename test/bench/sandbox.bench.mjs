#!/usr/bin/env node
/**
 * What the sandbox costs at start-up: `node test/bench/sandbox.bench.mjs [--json] [--quick]`
 * (the plugins' TypeScript is loaded with jiti, as plinth loads it; `plinth/sdk` is the built one).
 *
 * 1. One spawned node hook through the hook runner, confined (a downloaded
 *    plugin: bubblewrap, the socat relay, the proxy, Node's permission flags
 *    and the preload) against the same hook unconfined (the launcher without
 *    a sandbox). Target: under 30 ms added per spawn (median).
 * 2. Connecting to a stdio MCP server (process start and the MCP initialize
 *    handshake), confined against unconfined. Persistent hooks and servers
 *    pay this once.
 *
 * Rounds are interleaved (A,B then B,A). Targets are reported, not asserted.
 * Without bubblewrap the benchmark says so and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { Client } from '@modelcontextprotocol/client';
import { benchOptions, median, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'hooks');
const SCRIPT = path.join(FIXTURES, 'persistent.mjs');
const STDIO_SERVER = path.join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const { json: JSON_OUT, quick: QUICK } = benchOptions('sandbox.bench');
const N = QUICK ? { warmup: 1, rounds: 2, perSide: 2, connectRounds: 2 } : { warmup: 4, rounds: 10, perSide: 8, connectRounds: 12 };
const TARGET_ADDED_MS = 30;

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const stats = (values) => ({ median: round(median(values)), p90: round(quantile(values, 0.9)), min: round(Math.min(...values)), max: round(Math.max(...values)), n: values.length });

if (spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--', 'true']).status !== 0 || spawnSync('socat', ['-V']).error) {
  const why = 'bubblewrap or socat cannot run here: nothing to measure';
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ skipped: why })}\n`);
  else process.stdout.write(`sandbox.bench: SKIPPED (${why})\n`);
  process.exit(0);
}

const jiti = createJiti(import.meta.url);
const { createRunner, DEFAULT_ALLOWED_COMMANDS, DEFAULT_MAX_OUTPUT_BYTES } = await jiti.import('../../plugins/hooks/runner/runner.ts');
const { buildInput } = await jiti.import('../../plugins/hooks/protocol.ts');
const { createLauncher } = await jiti.import('../../plugins/launcher/launcher.ts');
const { createSandbox } = await jiti.import('../../plugins/sandbox/confine.ts');
const { probeSandbox } = await jiti.import('../../plugins/sandbox/probe.ts');
const { createGrantPolicy } = await jiti.import('../../plugins/sandbox/grants/index.ts');
const { createStdioTransportFactory, STDIO_DEFAULTS } = await jiti.import('../../plugins/transport-stdio/index.ts');
const { permissionsSchema } = await jiti.import('../../sdk/contracts/sandbox.ts');

const root = mkdtempSync(path.join(os.tmpdir(), 'plinth-sandbox-bench-'));
const home = path.join(root, 'home');
const workspace = path.join(root, 'workspace');
for (const dir of [home, workspace]) mkdirSync(dir, { recursive: true });

const plain = createLauncher();
// Never ask: what the bench's principals declare is granted for this session below, as the user would.
const policy = createGrantPolicy({ home, io: () => ({ input: new PassThrough(), output: new PassThrough() }) });
let sandbox;
const confinedLauncher = createLauncher({ sandbox: async () => sandbox });
sandbox = createSandbox({
  home,
  workspace,
  userHome: os.homedir(),
  runtimeRoot: path.join(root, 'runtime'),
  policy,
  probe: () =>
    probeSandbox({
      run: async (file, args) => {
        const r = await plain.run({ owner: 'bench', program: file, args: [...args] });
        return { exitCode: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
      },
    }),
});
const principal = (id, declared) => {
  const permissions = permissionsSchema.parse(declared);
  policy.store.setSession(id, { version: 'bench', permissions });
  return { id, source: 'downloaded', dir: FIXTURES, declared: permissions, label: `plugin "${id}"` };
};
const hookPrincipal = principal('bench-hook', {});
const serverPrincipal = principal('bench-server', { filesystem: { read: [path.join(ROOT, 'node_modules'), path.join(ROOT, 'test', 'fixtures'), path.join(ROOT, 'package.json')] } });

const hook = {
  id: 'bench-plugin/bench',
  name: 'bench',
  events: ['before_tool'],
  subscribedAs: ['pre-tool-call'],
  matcher: {},
  action: { type: 'command', command: 'node', args: [SCRIPT] },
  cwd: FIXTURES,
  timeoutMs: 10_000,
  priority: 0,
  dependsOn: [],
  parallel: false,
  rateLimit: {},
  onError: 'block',
  enabled: true,
  persistent: false,
  source: 'downloaded',
  origin: 'bench',
  plugin: 'bench-plugin',
};
const runnerFor = (launcher, confined) =>
  createRunner({ allowedCommands: DEFAULT_ALLOWED_COMMANDS, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES, env: [], workspace, launcher, ...(confined && { principalOf: () => hookPrincipal }) });
const runners = { confined: runnerFor(confinedLauncher, true), open: runnerFor(plain, false) };
const context = { tool: 'read-file', args: { path: 'README.md' } };
async function runHook(side) {
  const result = await runners[side].run(hook, buildInput(hook, 'pre-tool-call', context, 'bench'));
  if (!result.ok || result.response.allow !== true) throw new Error(`${side} hook failed: ${JSON.stringify(result)}`);
}

const transports = { confined: createStdioTransportFactory(STDIO_DEFAULTS, { launcher: () => confinedLauncher }), open: createStdioTransportFactory(STDIO_DEFAULTS, { launcher: () => plain }) };
const quiet = { log: { debug() {}, info() {}, warn() {}, error() {} }, redact: (t) => t };
async function connectServer(side) {
  const definition = { name: 'bench', transport: 'stdio', command: process.execPath, args: [STDIO_SERVER], env: {}, cwd: workspace, headers: {}, connectTimeoutMs: 10_000, enabled: true, source: 'downloaded', origin: 'bench', secrets: [], ...(side === 'confined' && { actingFor: serverPrincipal }) };
  const started = performance.now();
  const connection = await transports[side].create(definition, quiet);
  const client = new Client({ name: 'sandbox-bench', version: '1.0.0' });
  await client.connect(connection.transport);
  const ms = performance.now() - started;
  await client.close();
  return ms;
}

async function interleaved(label, rounds, perSide, once) {
  const samples = { confined: [], open: [] };
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? ['confined', 'open'] : ['open', 'confined']) {
      for (let i = 0; i < perSide; i++) samples[side].push(await once(side));
    }
  }
  const added = median(samples.confined) - median(samples.open);
  progress(`  ${label}: done`);
  return {
    confinedMs: stats(samples.confined),
    openMs: stats(samples.open),
    addedMs: { median: round(added), p90: round(quantile(samples.confined, 0.9) - quantile(samples.open, 0.9)) },
    ratio: round(median(samples.confined) / median(samples.open), 3),
  };
}

try {
  progress(`1/2 hook spawn: ${N.rounds} interleaved rounds of ${N.perSide} per side, after ${N.warmup} warm-ups…`);
  for (let i = 0; i < N.warmup; i++) {
    await runHook('confined');
    await runHook('open');
  }
  const timed = (side) => {
    const started = performance.now();
    return runHook(side).then(() => performance.now() - started);
  };
  const hookResult = await interleaved('hook spawn', N.rounds, N.perSide, timed);
  progress(`2/2 stdio MCP connect: ${N.connectRounds} interleaved rounds…`);
  await connectServer('confined');
  await connectServer('open');
  const connectResult = await interleaved('MCP connect', N.connectRounds, 1, connectServer);
  const report = { hookSpawn: { ...hookResult, target: `< ${TARGET_ADDED_MS} ms added (median)`, pass: hookResult.addedMs.median < TARGET_ADDED_MS }, mcpConnect: connectResult, quick: QUICK };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const ms = (s) => `median ${s.median.toFixed(1)} ms, p90 ${s.p90.toFixed(1)} ms`;
    const lines = [
      'sandbox.bench' + (QUICK ? ' (quick: figures mean nothing)' : ''),
      `  hook spawn   confined ${ms(hookResult.confinedMs)} | unconfined ${ms(hookResult.openMs)}`,
      `               added ${hookResult.addedMs.median.toFixed(1)} ms (p90 ${hookResult.addedMs.p90.toFixed(1)} ms), ratio ${hookResult.ratio}  target ${report.hookSpawn.target}: ${report.hookSpawn.pass ? 'PASS' : 'MISS'}`,
      `  MCP connect  confined ${ms(connectResult.confinedMs)} | unconfined ${ms(connectResult.openMs)}`,
      `               added ${connectResult.addedMs.median.toFixed(1)} ms (p90 ${connectResult.addedMs.p90.toFixed(1)} ms), ratio ${connectResult.ratio}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
} finally {
  await runners.confined.close();
  await runners.open.close();
  await confinedLauncher.close();
  await plain.close();
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
}
