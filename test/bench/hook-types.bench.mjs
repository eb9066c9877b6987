#!/usr/bin/env node
/**
 * What running a hook without a process costs: `node test/bench/hook-types.bench.mjs [--json] [--quick]`
 * (no build needed: plinth's TypeScript is loaded with jiti, as plinth loads it).
 *
 * A kernel with the builtin plugins and two Claude Code hooks in the user's settings, both on
 * `PreToolUse`:
 *
 * 1. `http` (matcher `Bash`): `kernel.emit('before_tool', …)` — the matcher, trust, the plan, the
 *    input document, the capability check, the POST to a server on 127.0.0.1, the answer read
 *    with Claude Code's rules, the trace line — against a bare `fetch` POSTing the same document
 *    to the same server and parsing its answer. Target: ratio of medians ≤ 1.10. (The hook posts
 *    with node's own http client over a keep-alive agent, which costs less than `fetch`: the
 *    ratio can be below 1, and then says that the pipeline costs less than what it saves.)
 * 2. `mcp_tool` (matcher `Write`): the same emit, calling `check_path` of a real MCP server (SDK v2,
 *    stdio) — against `client.callTool` of the very same connected client, and parsing its text.
 *    Target: ratio of medians ≤ 1.10.
 *
 * Both sides run in this process against the same server, rounds interleaved (A,B then B,A).
 * Targets are reported, not asserted.
 */
import { Agent, createServer, request } from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { benchOptions, median, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GUARD_SERVER = `${ROOT}test/fixtures/hooks-handler-types/guard-server.mjs`;
const { json: JSON_OUT, quick: QUICK } = benchOptions('hook-types.bench');
const N = QUICK ? { warmup: 20, rounds: 4, perSide: 10 } : { warmup: 200, rounds: 16, perSide: 60 };
const TARGETS = { http: 1.1, mcpTool: 1.1, httpSameClient: Infinity };

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const stats = (values) => ({ median: round(median(values)), p90: round(quantile(values, 0.9)), n: values.length });

// The policy server: allows everything (an empty 200), as a policy server answers most calls.
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end());
});
await new Promise((done) => server.listen(0, '127.0.0.1', done));
const url = `http://127.0.0.1:${server.address().port}/hooks/pre-tool-use`;

const savedCI = process.env.CI;
process.env.CI = '1';
process.env.BENCH_HOOK_TOKEN = 'bench-token';
const jiti = createJiti(import.meta.url);
const { createTestKernel } = await jiti.import('../../testing/index.ts');
const kernel = await createTestKernel({
  builtin: true,
  logLevel: 'warn',
  settings: {
    mcpServers: { guard: { command: process.execPath, args: [GUARD_SERVER] } },
    hooks: {
      PreToolUse: [
        { matcher: 'Bash', hooks: [{ type: 'http', url, headers: { Authorization: 'Bearer $BENCH_HOOK_TOKEN' }, allowedEnvVars: ['BENCH_HOOK_TOKEN'] }] },
        { matcher: 'Write', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'check_path', input: { path: '${tool_input.file_path}' } }] },
      ],
    },
  },
});

const bashContext = { tool: 'Bash', args: { command: 'ls -la' }, sessionId: 'bench' };
const writeContext = { tool: 'Write', args: { file_path: 'src/a.ts', content: 'x' }, sessionId: 'bench' };
// What the hook sends: the document Claude Code would (the bare side sends the same bytes).
const document = JSON.stringify({ session_id: 'bench', transcript_path: '', cwd: kernel.paths?.workspace ?? process.cwd(), hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: 'Bash', tool_input: { command: 'ls -la' } });

const emitAllowed = async (context) => {
  const decision = await kernel.emit('before_tool', context);
  if (!decision.allow) throw new Error(`the hook blocked: ${JSON.stringify(decision)}`);
};

/** The same POST with node's client over a keep-alive agent, as the hook sends it: what the pipeline adds, shown beside the target. */
const agent = new Agent({ keepAlive: true });
const nodePost = () =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { Authorization: `Bearer ${process.env.BENCH_HOOK_TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(document) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 && (text === '' || typeof JSON.parse(text) === 'object') ? resolve() : reject(new Error(`node http: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(document);
  });

const mcp = await kernel.get('mcp');
const sides = {
  http: {
    hook: () => emitAllowed(bashContext),
    bare: async () => {
      const response = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${process.env.BENCH_HOOK_TOKEN}`, 'content-type': 'application/json' }, body: document, redirect: 'manual' });
      const text = await response.text();
      if (response.status !== 200 || (text !== '' && typeof JSON.parse(text) !== 'object')) throw new Error(`bare fetch: ${response.status}`);
    },
  },
  httpSameClient: { hook: () => emitAllowed(bashContext), bare: nodePost },
  mcpTool: {
    hook: () => emitAllowed(writeContext),
    bare: async () => {
      const result = await mcp.client('guard').callTool({ name: 'check_path', arguments: { path: 'src/a.ts' } });
      const text = result.content.map((b) => b.text ?? '').join('\n');
      if (result.isError || typeof JSON.parse(text) !== 'object') throw new Error(`bare callTool: ${text}`);
    },
  },
};

async function compare(name) {
  const { hook, bare } = sides[name];
  progress(`${name}: ${N.warmup} warm-up calls per side, then ${N.rounds} interleaved rounds of ${N.perSide}…`);
  for (let i = 0; i < N.warmup; i++) {
    await hook();
    await bare();
  }
  const samples = { hook: [], bare: [] };
  for (let r = 0; r < N.rounds; r++) {
    for (const side of r % 2 === 0 ? ['hook', 'bare'] : ['bare', 'hook']) {
      const fn = side === 'hook' ? hook : bare;
      for (let i = 0; i < N.perSide; i++) {
        const started = performance.now();
        await fn();
        samples[side].push(performance.now() - started);
      }
    }
  }
  const ratio = median(samples.hook) / median(samples.bare);
  return { hookMs: stats(samples.hook), bareMs: stats(samples.bare), ratio: round(ratio), target: `≤ ${TARGETS[name]}`, pass: ratio <= TARGETS[name] };
}

try {
  // Connect the server once (the first mcp_tool hook would), so that both sides use the connected client.
  await mcp.start('guard');
  if (mcp.client('guard') === undefined) throw new Error('the guard MCP server did not connect');
  const http = await compare('http');
  const httpSameClient = await compare('httpSameClient');
  const mcpTool = await compare('mcpTool');
  const results = { node: process.version, platform: `${process.platform} ${process.arch}`, cpus: os.cpus().length, quick: QUICK, http, httpSameClient: { ...httpSameClient, target: 'none (shown)', pass: true }, mcpTool };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else {
    const verdict = (pass) => (pass ? 'PASS' : 'MISS');
    process.stdout.write(
      [
        `plinth hook handler types benchmark — node ${process.version}, ${process.platform} ${process.arch}, ${os.cpus().length} CPU(s), load ${os.loadavg()[0].toFixed(2)}${QUICK ? ', --quick (smoke test, do not quote)' : ''}`,
        '',
        `1. http hook through kernel.emit          median ${http.hookMs.median.toFixed(3)} ms, p90 ${http.hookMs.p90.toFixed(3)} ms`,
        `   bare fetch to the same server           median ${http.bareMs.median.toFixed(3)} ms, p90 ${http.bareMs.p90.toFixed(3)} ms`,
        `   ratio hook / bare                       ${http.ratio.toFixed(3)}   target ${http.target}   ${verdict(http.pass)}`,
        `   (node's http client, as the hook posts)  median ${httpSameClient.bareMs.median.toFixed(3)} ms: ratio hook / it ${httpSameClient.ratio.toFixed(3)}, what the pipeline adds`,
        `2. mcp_tool hook through kernel.emit      median ${mcpTool.hookMs.median.toFixed(3)} ms, p90 ${mcpTool.hookMs.p90.toFixed(3)} ms`,
        `   direct callTool on the same client      median ${mcpTool.bareMs.median.toFixed(3)} ms, p90 ${mcpTool.bareMs.p90.toFixed(3)} ms`,
        `   ratio hook / direct                     ${mcpTool.ratio.toFixed(3)}   target ${mcpTool.target}   ${verdict(mcpTool.pass)}`,
        '',
        `${http.hookMs.n} calls per side in ${N.rounds} interleaved rounds, after ${N.warmup} warm-up calls per side.`,
      ].join('\n') + '\n',
    );
  }
} finally {
  agent.destroy();
  await kernel.dispose();
  server.closeAllConnections();
  server.close();
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
}
