#!/usr/bin/env node
/**
 * What OAuth costs a remote MCP server's requests: `node test/bench/oauth.bench.mjs [--json] [--quick]`
 * (after `npm run build`: the oauth plugin's modules are imported from dist/).
 *
 * 1. The encrypted-file secret store (AES-256-GCM, lock file, atomic write):
 *    median and p90 of `get` and of `set` of one server's record.
 * 2. The auth provider's `tokens()`, which the SDK's transports call before
 *    every HTTP request: the first call (reads and decrypts the record) and
 *    the calls after it (the record kept in memory for up to 30 s), against an
 *    empty async function called the same way as the baseline.
 *
 * Figures only; nothing is asserted. `--json` prints one JSON document on stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchOptions, median, quantile } from './support.mjs';

const { json, quick } = benchOptions('oauth.bench');
const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = (path) => import(join(root, 'dist', path));
const { createSecretStore } = await dist('plugins/oauth/secrets/store.js');
const { TokenVault } = await dist('plugins/oauth/record.js');
const { StoredOAuthProvider } = await dist('plugins/oauth/provider.js');

const home = mkdtempSync(join(tmpdir(), 'plinth-oauth-bench-'));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const progress = (line) => {
  if (!json) process.stderr.write(`${line}\n`);
};

try {
  const secrets = createSecretStore({ home, storage: 'file', keychainModule: 'keytar', probeTimeoutMs: 5000, keychainTimeoutMs: 5000, log: quiet });
  const url = 'http://127.0.0.1:9/mcp';
  const record = {
    version: 1,
    server: 'bench',
    serverUrl: url,
    redirectUrl: 'http://127.0.0.1:33418/callback',
    client: { client_id: 'c'.repeat(36), redirect_uris: ['http://127.0.0.1:33418/callback'], issuer: 'http://127.0.0.1:9/' },
    tokens: { access_token: 'a'.repeat(43), token_type: 'Bearer', expires_in: 3600, refresh_token: 'r'.repeat(43), scope: 'mcp:read mcp:write', issuer: 'http://127.0.0.1:9/' },
    expiresAt: Date.now() + 3_600_000,
    obtainedAt: Date.now(),
    discovery: { authorizationServerUrl: 'http://127.0.0.1:9/', authorizationServerMetadata: { issuer: 'http://127.0.0.1:9/', authorization_endpoint: 'http://127.0.0.1:9/authorize', token_endpoint: 'http://127.0.0.1:9/token', response_types_supported: ['code'] } },
  };
  const text = JSON.stringify(record);
  // Other servers' records in the same file, as a user with several sign-ins has.
  for (let i = 0; i < 5; i++) await secrets.set(`mcp-oauth:other-${i}`, text);

  const rounds = quick ? 20 : 300;
  const setMs = [];
  const getMs = [];
  progress(`store: ${rounds} set and get of one record (${text.length} bytes) in a file with 6 records`);
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    await secrets.set('mcp-oauth:bench', text);
    setMs.push(performance.now() - t);
    t = performance.now();
    await secrets.get('mcp-oauth:bench');
    getMs.push(performance.now() - t);
  }

  const vault = new TokenVault(secrets, home, 30_000);
  const provider = () =>
    new StoredOAuthProvider({
      server: { name: 'bench', url, headers: {}, args: [], env: {}, cwd: home, transport: 'http', connectTimeoutMs: 10_000, enabled: true, source: 'user', origin: 'bench', secrets: [] },
      config: { clientName: 'plinth', grant: 'authorization_code' },
      vault,
      refresh: { server: 'bench', vault, fetch, skewMs: 60_000, requestTimeoutMs: 30_000 },
      log: quiet,
      mode: { kind: 'connection' },
    });
  const coldRounds = quick ? 10 : 200;
  const coldMs = [];
  progress(`provider: ${coldRounds} first calls of tokens()`);
  for (let i = 0; i < coldRounds; i++) {
    const p = provider();
    const t = performance.now();
    await p.tokens();
    coldMs.push(performance.now() - t);
  }
  const warmCalls = quick ? 1_000 : 100_000;
  const baseline = async () => undefined;
  const warm = provider();
  await warm.tokens();
  const perCall = async (fn) => {
    const t = performance.now();
    for (let i = 0; i < warmCalls; i++) await fn();
    return ((performance.now() - t) * 1e6) / warmCalls;
  };
  progress(`provider: ${warmCalls} calls of tokens() with the record in memory, against an empty async function`);
  const warmNs = [];
  const baseNs = [];
  for (let round = 0; round < 5; round++) {
    warmNs.push(await perCall(() => warm.tokens()));
    baseNs.push(await perCall(baseline));
  }

  const result = {
    store: {
      setMs: { median: median(setMs), p90: quantile(setMs, 0.9) },
      getMs: { median: median(getMs), p90: quantile(getMs, 0.9) },
    },
    provider: {
      firstTokensMs: { median: median(coldMs), p90: quantile(coldMs, 0.9) },
      cachedTokensNs: median(warmNs),
      emptyAsyncNs: median(baseNs),
    },
    quick,
  };
  if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const f = (n, digits = 3) => n.toFixed(digits);
    process.stdout.write(
      [
        `secret store (encrypted file): set median ${f(result.store.setMs.median)} ms (p90 ${f(result.store.setMs.p90)}), get median ${f(result.store.getMs.median)} ms (p90 ${f(result.store.getMs.p90)})`,
        `auth provider tokens(): first call median ${f(result.provider.firstTokensMs.median)} ms (p90 ${f(result.provider.firstTokensMs.p90)}); later calls ${f(result.provider.cachedTokensNs, 0)} ns vs ${f(result.provider.emptyAsyncNs, 0)} ns for an empty async function`,
        quick ? '(--quick: a smoke run, the figures mean nothing)' : '',
      ]
        .filter(Boolean)
        .join('\n') + '\n',
    );
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
