/**
 * `plinth serve --stdio` and `--http` answer both protocol eras on one endpoint: the SDK v2
 * `Client` in `legacy`, `auto` and pinned-2026 modes lists, calls, reads, gets prompts and
 * completions through the same gateway (upstream: the legacy fixture server over stdio), and a
 * hook that blocks one tool and rewrites another's arguments holds in both eras.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, ClientOptions } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, type Sandbox, cleanEnv, ensureBuilt, sandbox } from './support/cli.js';
import { baseSettings, fixtureStdio, httpGateway, stop } from './support/gateway.js';

const TEST_TIMEOUT = 60_000;
const MODES: Record<string, ClientOptions['versionNegotiation']> = {
  legacy: { mode: 'legacy' },
  auto: { mode: 'auto' },
  pinned: { mode: { pin: '2026-07-28' } },
};
const ERA: Record<string, 'legacy' | 'modern'> = { legacy: 'legacy', auto: 'modern', pinned: 'modern' };

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let box: Sandbox;
let http: Awaited<ReturnType<typeof httpGateway>>;
beforeAll(async () => {
  ensureBuilt();
  box = await sandbox('plinth-gateway-eras-');
  // The hook: fx__fail is blocked, fx__echo's text rewritten — whichever era the call came in.
  const hook = join(box.base, 'gatekeeper.mjs');
  await writeFile(
    hook,
    `import { readFileSync } from 'node:fs';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
if (context.tool === 'fx__echo') process.stdout.write(JSON.stringify({ allow: true, context: { args: { text: 'rewritten: ' + context.args.text } } }));
else if (context.tool === 'fx__fail') process.stdout.write(JSON.stringify({ allow: false, message: 'fail is not allowed through the gateway' }));
else process.stdout.write(JSON.stringify({ allow: true }));
`,
  );
  await box.settings(baseSettings({ fx: fixtureStdio() }, { hooks: { before_tool: [{ name: 'gatekeeper', command: 'node', args: [hook] }] } }));
  http = await httpGateway(box);
}, 120_000);
afterAll(async () => {
  if (http) await stop(http.child);
  await box?.remove();
});

async function connect(wire: 'stdio' | 'http', mode: string): Promise<Client> {
  const client = new Client({ name: 'eras-host', version: '1.0.0' }, { versionNegotiation: MODES[mode] });
  const transport =
    wire === 'http'
      ? new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { Authorization: `Bearer ${http.token}` } } })
      : new StdioClientTransport({ command: process.execPath, args: [BIN, ...box.dirs, 'serve', '--stdio'], cwd: box.workspace, env: cleanEnv({}, { ci: true }) as Record<string, string>, stderr: 'pipe' });
  await client.connect(transport);
  return client;
}

for (const wire of ['http', 'stdio'] as const) {
  describe(`plinth serve --${wire}`, () => {
    for (const mode of Object.keys(MODES)) {
      test(`a ${mode} client: tools, resources, templates, prompts, completions, and the hook`, async () => {
        const client = await connect(wire, mode);
        try {
          expect(client.getProtocolEra()).toBe(ERA[mode]);
          if (ERA[mode] === 'modern') expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');

          const names = (await client.listTools()).tools.map((t) => t.name);
          expect(names).toEqual(expect.arrayContaining(['fx__echo', 'fx__add', 'fx__fail']));
          expect(text(await client.callTool({ name: 'fx__add', arguments: { a: 2, b: 3 } }))).toBe('5');

          // The hook, in this era: one tool blocked, another's arguments rewritten.
          const blocked = (await client.callTool({ name: 'fx__fail', arguments: { message: 'x' } })) as CallToolResult;
          expect(blocked.isError).toBe(true);
          expect(text(blocked)).toContain('PLN_E_MCP_BLOCKED');
          expect(text(blocked)).toContain('fail is not allowed through the gateway');
          expect(text(await client.callTool({ name: 'fx__echo', arguments: { text: 'original' } }))).toBe('rewritten: original');

          const uris = (await client.listResources()).resources.map((r) => r.uri);
          expect(uris).toEqual(expect.arrayContaining(['plinth://gateway/status', 'fixture://docs/readme']));
          const readme = await client.readResource({ uri: 'fixture://docs/readme' });
          expect(String((readme.contents[0] as { text?: string }).text)).toContain('fixture');
          const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
          expect(templates).toContain('fixture://notes/{topic}');
          const topic = await client.complete({ ref: { type: 'ref/resource', uri: 'fixture://notes/{topic}' }, argument: { name: 'topic', value: '' } });
          expect(topic.completion.values.length).toBeGreaterThan(0);

          const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
          expect(prompts).toContain('fx__greet');
          const greeting = await client.getPrompt({ name: 'fx__greet', arguments: { name: 'Ada' } });
          expect(JSON.stringify(greeting.messages)).toContain('Ada');
          const completed = await client.complete({ ref: { type: 'ref/prompt', name: 'fx__greet' }, argument: { name: 'name', value: 'A' } });
          expect(completed.completion.values.length).toBeGreaterThan(0);
        } finally {
          await client.close();
        }
      }, TEST_TIMEOUT);
    }
  });
}
