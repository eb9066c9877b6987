#!/usr/bin/env node
/**
 * A stdio MCP server on the SDK v2 (@modelcontextprotocol/server) with 16
 * tools of varied input schemas (strings with formats and patterns, enums,
 * nested objects, arrays, unions), like a real server's catalogue: the
 * upstream of the `mcp status` comparison in mcp.bench.mjs, where N copies
 * of it are N identical servers. `echo` ({ message } → "Echo: <message>")
 * answers calls; the others answer "ok".
 *
 *   node test/bench/tools-server.mjs
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const ok = () => ({ content: [{ type: 'text', text: 'ok' }] });

const TOOLS = {
  echo: z.object({ message: z.string() }),
  add: z.object({ a: z.number(), b: z.number() }),
  search: z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(100).optional(), offset: z.number().int().min(0).optional() }),
  read_file: z.object({ path: z.string(), encoding: z.enum(['utf8', 'base64', 'latin1']).optional(), head: z.number().int().optional(), tail: z.number().int().optional() }),
  write_file: z.object({ path: z.string(), content: z.string(), mode: z.enum(['create', 'overwrite', 'append']) }),
  list_directory: z.object({ path: z.string(), recursive: z.boolean().optional(), exclude: z.array(z.string()).optional() }),
  fetch_url: z.object({ url: z.string().url(), method: z.enum(['GET', 'POST', 'PUT', 'DELETE']).optional(), headers: z.record(z.string(), z.string()).optional(), body: z.string().optional() }),
  send_email: z.object({ to: z.array(z.string().email()).min(1), cc: z.array(z.string().email()).optional(), subject: z.string().max(200), body: z.string() }),
  create_issue: z.object({
    title: z.string().min(1),
    body: z.string().optional(),
    labels: z.array(z.string()).optional(),
    assignees: z.array(z.string()).optional(),
    milestone: z.number().int().optional(),
  }),
  query_db: z.object({ sql: z.string(), params: z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(), timeoutMs: z.number().int().positive().optional() }),
  schedule: z.object({ at: z.string().datetime(), title: z.string(), attendees: z.array(z.object({ email: z.string().email(), optional: z.boolean().optional() })).optional() }),
  translate: z.object({ text: z.string(), from: z.string().regex(/^[a-z]{2}$/).optional(), to: z.string().regex(/^[a-z]{2}$/) }),
  resize_image: z.object({ path: z.string(), width: z.number().int().min(1), height: z.number().int().min(1), fit: z.enum(['cover', 'contain', 'fill']).optional() }),
  git_commit: z.object({ message: z.string().min(1), paths: z.array(z.string()).optional(), amend: z.boolean().optional(), author: z.object({ name: z.string(), email: z.string().email() }).optional() }),
  weather: z.object({ location: z.union([z.object({ city: z.string(), country: z.string().optional() }), z.object({ lat: z.number().min(-90).max(90), lon: z.number().min(-180).max(180) })]), units: z.enum(['metric', 'imperial']).optional() }),
  run_tests: z.object({ pattern: z.string().optional(), bail: z.boolean().optional(), env: z.record(z.string(), z.string()).optional(), shard: z.object({ index: z.number().int(), total: z.number().int() }).optional() }),
};

function build() {
  const server = new McpServer({ name: 'tools-bench', version: '1.0.0' }, { capabilities: { tools: {} } });
  for (const [name, inputSchema] of Object.entries(TOOLS)) {
    server.registerTool(name, { description: `The ${name.replace(/_/g, ' ')} tool`, inputSchema }, name === 'echo' ? ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }) : ok);
  }
  return server;
}

serveStdio(build);
