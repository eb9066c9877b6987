#!/usr/bin/env node
/**
 * plinth's demo MCP server: a real server written with the MCP SDK, spoken to
 * over stdio. It gives `plinth up` on the embedded default something to connect
 * to, and shows each feature once: three tools (`echo`, `add`, `now`), one
 * resource (`demo://about`) and one prompt (`greet`, with argument completion).
 *
 * Plain JavaScript on purpose: it runs as its own `node` process, outside jiti.
 */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { McpServer, completable } from '@modelcontextprotocol/server';
import { z } from 'zod';

const VERSION = '1.0.0';
const NAMES = ['Ada', 'Alan', 'Barbara', 'Grace', 'Ken', 'Linus', 'Margaret'];

const server = new McpServer({ name: 'plinth-demo', title: 'plinth demo server', version: VERSION });

server.registerTool(
  'echo',
  {
    title: 'Echo',
    description: 'Returns the message it was given.',
    inputSchema: z.object({ message: z.string().describe('What to echo back') }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  async ({ message }) => ({ content: [{ type: 'text', text: message }] }),
);

server.registerTool(
  'add',
  {
    title: 'Add',
    description: 'Adds two numbers.',
    inputSchema: z.object({ a: z.number().describe('First addend'), b: z.number().describe('Second addend') }),
    outputSchema: z.object({ sum: z.number() }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  async ({ a, b }) => ({ content: [{ type: 'text', text: `${a} + ${b} = ${a + b}` }], structuredContent: { sum: a + b } }),
);

server.registerTool(
  'now',
  {
    title: 'Now',
    description: "The server's current time, in ISO 8601 (UTC) or in the IANA time zone given.",
    inputSchema: z.object({ timeZone: z.string().optional().describe('An IANA time zone such as Europe/Paris (default UTC)') }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async ({ timeZone }) => {
    const now = new Date();
    if (!timeZone) return { content: [{ type: 'text', text: now.toISOString() }] };
    try {
      const local = now.toLocaleString('sv-SE', { timeZone, timeZoneName: 'short' });
      return { content: [{ type: 'text', text: `${local} (${timeZone})` }] };
    } catch {
      // A tool failure the model can read and correct, not a protocol error.
      return { isError: true, content: [{ type: 'text', text: `unknown time zone "${timeZone}"` }] };
    }
  },
);

server.registerResource(
  'about',
  'demo://about',
  { title: 'About this server', description: 'What the demo server offers', mimeType: 'text/markdown' },
  async (uri) => ({
    contents: [
      {
        uri: uri.href,
        mimeType: 'text/markdown',
        text: [
          '# plinth demo server',
          '',
          `Version ${VERSION}, started ${new Date().toISOString()}.`,
          '',
          '- tools: `echo`, `add`, `now`',
          '- resource: `demo://about` (this page)',
          '- prompt: `greet` (argument `name`, completed from a short list)',
        ].join('\n'),
      },
    ],
  }),
);

server.registerPrompt(
  'greet',
  {
    title: 'Greet someone',
    description: 'Asks the model to greet a person by name.',
    argsSchema: z.object({
      name: completable(z.string().describe('Who to greet'), (value) => NAMES.filter((n) => n.toLowerCase().startsWith((value ?? '').toLowerCase()))),
    }),
  },
  ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly, in one sentence.` } }],
  }),
);

const transport = new StdioServerTransport();
await server.connect(transport);
// The client closes stdin to stop us: leave then, rather than wait for a signal.
process.stdin.on('end', () => void server.close().finally(() => process.exit(0)));
