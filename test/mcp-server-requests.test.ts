/**
 * A server that floods its client with requests (here 3,000 `roots/list` at
 * once, sent by the fixture server over stdio to a one-shot `plinth call`):
 * plinth answers what the limit allows, refuses the rest with a coded
 * JSON-RPC error, warns once, and neither piles up listeners (no raw
 * MaxListenersExceededWarning) nor leaves a request unanswered.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SERVER_REQUEST_LIMIT, requestLimit } from '../plugins/mcp/features/request-limit.js';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { SERVERS } from './support/gateway.js';

let box: Sandbox;

beforeAll(async () => {
  ensureBuilt();
  box = await sandbox('plinth-server-requests-');
  await box.settings({
    mcpServers: { fx: { command: process.execPath, args: [join(SERVERS, 'stdio-server.mjs')] } },
    plugins: { 'mcp-demo': { enabled: false } },
  });
}, 120_000);

afterAll(async () => {
  await box?.remove();
});

describe('requests from a server are rate-limited', () => {
  test('3,000 roots/list at once: the burst is answered, the rest refused with PLN_E_MCP_SERVER_REQUEST_LIMIT, one warning, no listener pile-up', async () => {
    const result = await run(box, ['call', 'fx__flood_roots', '--args', '{"count":3000}']);
    expectExit(result, 0);
    const outcome = json<{ answered: number; refused: number; errors: Record<string, number> }>(result);
    expect(outcome.answered).toBeGreaterThanOrEqual(SERVER_REQUEST_LIMIT.burst);
    expect(outcome.refused).toBeGreaterThan(0);
    expect(outcome.answered + outcome.refused).toBe(3000);
    // Every refusal is ours, answered at once: none timed out.
    const messages = Object.keys(outcome.errors);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('PLN_E_MCP_SERVER_REQUEST_LIMIT: roots/list refused: server "fx"');
    expect(result.stderr).not.toContain('MaxListenersExceededWarning');
    expect(result.stderr.match(/PLN_E_MCP_SERVER_REQUEST_LIMIT/g)).toHaveLength(1);
  }, 30_000);

  test('the bucket: a burst, then the refill rate; one warning per burst, a new one after a quiet spell', () => {
    let clock = 0;
    const warnings: string[] = [];
    const limit = requestLimit('s', { warn: (line: string) => void warnings.push(line) }, { burst: 3, perSecond: 2, quietMs: 1000 }, () => clock);
    for (let i = 0; i < 3; i++) limit.take('roots/list');
    expect(() => limit.take('roots/list')).toThrow(/PLN_E_MCP_SERVER_REQUEST_LIMIT: roots\/list refused/);
    expect(() => limit.take('sampling/createMessage')).toThrow(expect.objectContaining({ code: -32029 }));
    expect(warnings).toHaveLength(1);
    clock = 500; // one more token
    limit.take('roots/list');
    expect(() => limit.take('roots/list')).toThrow();
    expect(warnings).toHaveLength(1); // the same burst
    clock = 5000; // quiet for longer than quietMs, bucket full again
    for (let i = 0; i < 3; i++) limit.take('elicitation/create');
    expect(() => limit.take('elicitation/create')).toThrow();
    expect(warnings).toHaveLength(2);
  });
});
