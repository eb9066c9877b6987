#!/usr/bin/env node
/**
 * The server the conformance suite's server scenarios expect (their fixture
 * tools, resources and prompts, by the names the scenarios call), built on the
 * MCP SDK v2's server package and nothing else: node:http, a stateful
 * 2025-11-25 leg (one `NodeStreamableHTTPServerTransport` per session, an
 * event store for resumption) and the stateless 2026-07-28 leg
 * (`createMcpHandler`), split per request with the SDK's
 * `classifyInboundRequest`. It is the baseline "bare SDK v2 server" target and
 * the upstream the gateway target relays.
 *
 *   node test/conformance/everything-server.mjs [--port 0]
 *
 * Prints one JSON line `{"url":…,"port":…}` once listening. Loopback only.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { NodeStreamableHTTPServerTransport, localhostHostValidation, toNodeHandler } from '@modelcontextprotocol/node';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  acceptedContent,
  classifyInboundRequest,
  createMcpHandler,
  createRequestStateCodec,
  fromJsonSchema,
  inputRequired,
  isInitializeRequest,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });

/** requestState is sealed (HMAC, per process) and verified before a handler sees it. */
const stateCodec = createRequestStateCodec({ key: crypto.getRandomValues(new Uint8Array(32)) });

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const form = (message, properties, required = Object.keys(properties)) => ({ message, requestedSchema: { type: 'object', properties, required } });
const askName = (message = 'What is your name?') => inputRequired.elicit(form(message, { name: { type: 'string' } }));
const askConfirm = () => inputRequired.elicit(form('Please confirm', { ok: { type: 'boolean' } }));
const sampling = (prompt, maxTokens) => inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens });

/** Legacy sessions, by id: their transports (for closing a call's SSE stream). */
const transports = new Map();

/**
 * Asks the client along a call and hands what came back to `report`: on a 2025
 * session a server→client request on the call's own stream; on a 2026 request
 * (it carries the `_meta` envelope) the same request as `input_required`, and
 * the retry's answer. The scenarios that call these tools are 2025 ones; the
 * 2026 form is for a client between them and the suite (the gateway with a
 * modern upstream), which must turn it into the 2025 request.
 */
async function ask(ctx, request, report) {
  if (ctx.mcpReq.envelope !== undefined) {
    const answer = ctx.mcpReq.inputResponses?.asked;
    if (answer !== undefined) return report(answer);
    const asked = request.method === 'sampling/createMessage' ? inputRequired.createMessage(request.params) : inputRequired.elicit(request.params);
    return inputRequired({ inputRequests: { asked } });
  }
  return report(await ctx.mcpReq.send(request));
}

/** An elicitation along a call, reported as the 2025 scenarios read it. */
async function legacyAsk(ctx, request, label) {
  try {
    return await ask(ctx, request, (result) => text(`${label}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`));
  } catch (error) {
    return text(`${label} not supported or error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function build() {
  const server = new McpServer(
    { name: 'plinth-conformance-everything', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      requestState: { verify: stateCodec.verify },
    },
  );
  const tool = (name, description, handler, inputSchema = z.object({})) => server.registerTool(name, { description, inputSchema }, handler);

  // ── content ──
  tool('test_simple_text', 'simple text', async () => text('This is a simple text response for testing.'), undefined);
  tool('test_image_content', 'image', async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }), undefined);
  tool('test_audio_content', 'audio', async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }), undefined);
  tool(
    'test_embedded_resource',
    'embedded resource',
    async () => ({ content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] }),
    undefined,
  );
  tool(
    'test_multiple_content_types',
    'text, image and resource',
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
      ],
    }),
    undefined,
  );
  tool(
    'test_error_handling',
    'always fails',
    async () => {
      throw new Error('This tool intentionally returns an error for testing');
    },
    undefined,
  );

  // ── notifications along a call ──
  tool('test_tool_with_logging', 'logs three messages', async (_args, ctx) => {
    for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } });
      await sleep(20);
    }
    return text('Tool with logging executed successfully');
  });
  tool('test_tool_with_progress', 'reports progress when given a token', async (_args, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) {
      for (const progress of [0, 50, 100]) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `step ${progress}` } });
        await sleep(20);
      }
    }
    return text(String(progressToken ?? 'no-progress-token'));
  });
  tool('test_reconnection', 'closes its SSE stream mid-call', async (_args, ctx) => {
    const transport = ctx.sessionId ? transports.get(ctx.sessionId) : undefined;
    if (transport && ctx.mcpReq.id !== undefined) transport.closeSSEStream(ctx.mcpReq.id);
    await sleep(100);
    return text('Reconnection test completed successfully.');
  });

  // ── 2025 server→client requests ──
  tool(
    'test_sampling',
    'asks the client for a completion',
    async (args, ctx) => {
      try {
        const request = { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: args.prompt } }], maxTokens: 100 } };
        return await ask(ctx, request, (result) => text(`LLM response: ${result.content?.text ?? 'No response'}`));
      } catch (error) {
        return text(`Sampling not supported or error: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    z.object({ prompt: z.string() }),
  );
  tool(
    'test_elicitation',
    'asks the user',
    async (args, ctx) =>
      legacyAsk(ctx, { method: 'elicitation/create', params: { message: args.message, requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] } } }, 'User response'),
    z.object({ message: z.string() }),
  );
  tool('test_elicitation_sep1034_defaults', 'elicitation with defaults', async (_args, ctx) =>
    legacyAsk(
      ctx,
      {
        method: 'elicitation/create',
        params: form(
          'Please review and update the form fields with defaults',
          {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          [],
        ),
      },
      'Elicitation completed',
    ),
  );
  const choices = (prefix, title) => [1, 2, 3].map((n) => ({ const: `${prefix}${n}`, title: `${title} ${n}` }));
  tool('test_elicitation_sep1330_enums', 'elicitation with every enum form', async (_args, ctx) =>
    legacyAsk(
      ctx,
      {
        method: 'elicitation/create',
        params: form(
          'Please select options from the enum fields',
          {
            untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
            titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: choices('value', 'Option') },
            legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
            untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
            titledMulti: { type: 'array', description: 'Select multiple options with titles', minItems: 1, maxItems: 3, items: { anyOf: choices('value', 'Choice') } },
          },
          [],
        ),
      },
      'Elicitation completed',
    ),
  );

  // ── schemas kept as written ──
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'JSON Schema 2020-12 keywords',
      inputSchema: fromJsonSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' }, contactMethod: { type: 'string', enum: ['phone', 'email'] }, phone: { type: 'string' }, email: { type: 'string' } },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      }),
    },
    async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );
  server.registerTool(
    'test_x_mcp_header',
    {
      description: 'an argument mirrored into Mcp-Param-Region',
      inputSchema: fromJsonSchema({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, level: { type: 'integer' } } }),
    },
    async (args) => text(`region=${args.region ?? '<none>'}`),
  );

  // ── 2026: stateless diagnostics ──
  tool('test_missing_capability', 'needs the sampling capability', async (_args, ctx) =>
    ctx.mcpReq.inputResponses?.llm_answer === undefined ? inputRequired({ inputRequests: { llm_answer: sampling('Reply with the single word: pong', 16) } }) : text('sampling round-trip complete'),
  );
  tool('test_streaming_elicitation', 'answers with result frames only', async () => text('result frames only'));
  tool('test_logging_tool', 'logs through the per-request level', async (_args, ctx) => {
    await ctx.mcpReq.log('info', 'test_logging_tool ran');
    return text('logged');
  });
  tool('test_trigger_tool_change', 'publishes tools/list_changed', async () => {
    modern.notify.toolsChanged();
    return text('tools_list_changed published');
  });
  tool('test_trigger_prompt_change', 'publishes prompts/list_changed', async () => {
    modern.notify.promptsChanged();
    return text('prompts_list_changed published');
  });

  // ── 2026: input_required (multi round trip) ──
  tool('test_input_required_result_elicitation', 'asks for a name', async (_args, ctx) => {
    const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name')?.name;
    return typeof name === 'string' ? text(`Hello, ${name}!`) : inputRequired({ inputRequests: { user_name: askName() } });
  });
  tool('test_input_required_result_sampling', 'asks for a completion', async (_args, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.capital_question;
    if (answer === undefined) return inputRequired({ inputRequests: { capital_question: sampling('What is the capital of France?', 100) } });
    return text(`Sampling response: ${typeof answer.content?.text === 'string' ? answer.content.text : JSON.stringify(answer)}`);
  });
  tool('test_input_required_result_list_roots', 'asks for the roots', async (_args, ctx) => {
    const roots = ctx.mcpReq.inputResponses?.client_roots?.roots;
    if (!Array.isArray(roots)) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return text(`Client exposed ${roots.length} root(s): ${roots.map((root) => root.uri).join(', ')}`);
  });
  tool('test_input_required_result_request_state', 'round-trips sealed state', async (_args, ctx) => {
    if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm') === undefined) {
      return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await stateCodec.mint({ tool: 'request_state', nonce: randomUUID() }) });
    }
    if (ctx.mcpReq.requestState() === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid requestState: missing or not verified');
    return text('state-ok: requestState verified and confirmation received');
  });
  tool('test_input_required_result_multiple_inputs', 'three kinds in one round', async (_args, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const name = acceptedContent(responses, 'user_name')?.name;
    const greeting = responses?.greeting?.content?.text;
    const roots = responses?.client_roots?.roots;
    if (typeof name !== 'string' || typeof greeting !== 'string' || !Array.isArray(roots)) {
      return inputRequired({
        inputRequests: { user_name: askName(), greeting: sampling('Generate a greeting', 50), client_roots: inputRequired.listRoots() },
        requestState: await stateCodec.mint({ tool: 'multiple_inputs', nonce: randomUUID() }),
      });
    }
    return text(`${greeting} ${name} — ${roots.length} root(s) visible`);
  });
  tool('test_input_required_result_multi_round', 'two rounds, state changing', async (_args, ctx) => {
    const state = ctx.mcpReq.requestState();
    const round = state?.tool === 'multi_round' && typeof state.round === 'number' ? state.round : 0;
    if (round === 0) return inputRequired({ inputRequests: { step1: askName('Step 1: What is your name?') }, requestState: await stateCodec.mint({ tool: 'multi_round', round: 1, nonce: randomUUID() }) });
    if (round === 1) {
      const name = acceptedContent(ctx.mcpReq.inputResponses, 'step1')?.name ?? 'unknown';
      return inputRequired({
        inputRequests: { step2: inputRequired.elicit(form('Step 2: What is your favorite color?', { color: { type: 'string' } })) },
        requestState: await stateCodec.mint({ tool: 'multi_round', round: 2, name, nonce: randomUUID() }),
      });
    }
    return text(`Multi-round complete: ${String(state?.name ?? 'unknown')} likes ${acceptedContent(ctx.mcpReq.inputResponses, 'step2')?.color ?? 'unknown'}`);
  });
  tool('test_input_required_result_tampered_state', 'refuses state that fails verification', async (_args, ctx) => {
    if (ctx.mcpReq.requestState() !== undefined && acceptedContent(ctx.mcpReq.inputResponses, 'confirm') !== undefined) return text('integrity-ok: requestState verified');
    return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await stateCodec.mint({ tool: 'tampered_state', nonce: randomUUID() }) });
  });
  tool('test_input_required_result_capabilities', 'asks only for what the client declared', async (_args, ctx) => {
    if (ctx.mcpReq.inputResponses !== undefined) return text('Capability-aware input requests fulfilled');
    const declared = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY];
    const inputRequests = {};
    if (declared?.elicitation !== undefined) inputRequests.user_name = askName();
    if (declared?.sampling !== undefined) inputRequests.greeting = sampling('Generate a short greeting', 50);
    if (declared?.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
    return Object.keys(inputRequests).length === 0 ? text('No declared client capability supports an in-band input request') : inputRequired({ inputRequests });
  });

  // ── resources ──
  const fixed = (name, uri, mimeType, content) =>
    server.registerResource(name, uri, { title: name, description: `${name} resource`, mimeType }, async () => ({ contents: [{ uri, mimeType, ...content }] }));
  fixed('static-text', 'test://static-text', 'text/plain', { text: 'This is the content of the static text resource.' });
  fixed('static-binary', 'test://static-binary', 'image/png', { blob: PNG });
  fixed('watched-resource', 'test://watched-resource', 'text/plain', { text: 'Watched resource content' });
  server.registerResource('template', new ResourceTemplate('test://template/{id}/data', { list: undefined }), { title: 'Resource Template', description: 'parameter substitution', mimeType: 'application/json' }, async (uri, { id }) => ({
    contents: [{ uri: uri.toString(), mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
  }));
  server.server.setRequestHandler('resources/subscribe', async () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', async () => ({}));

  // ── prompts ──
  const user = (content) => ({ role: 'user', content });
  server.registerPrompt('test_simple_prompt', { title: 'Simple', description: 'no arguments' }, async () => ({ messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] }));
  server.registerPrompt('test_prompt_with_arguments', { title: 'With arguments', description: 'two arguments', argsSchema: z.object({ arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') }) }, async ({ arg1, arg2 }) => ({
    messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` })],
  }));
  server.registerPrompt('test_prompt_with_embedded_resource', { title: 'Embedded resource', description: 'embeds a resource', argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }) }, async ({ resourceUri }) => ({
    messages: [user({ type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } }), user({ type: 'text', text: 'Please process the embedded resource above.' })],
  }));
  server.registerPrompt('test_prompt_with_image', { title: 'Image', description: 'includes an image' }, async () => ({
    messages: [user({ type: 'image', data: PNG, mimeType: 'image/png' }), user({ type: 'text', text: 'Please analyze the image above.' })],
  }));
  server.registerPrompt('test_input_required_result_prompt', { title: 'MRTR prompt', description: 'asks for context first' }, async (ctx) => {
    const context = acceptedContent(ctx.mcpReq.inputResponses, 'user_context')?.context;
    if (typeof context !== 'string') return inputRequired({ inputRequests: { user_context: inputRequired.elicit(form('What context should the prompt use?', { context: { type: 'string' } })) } });
    return { messages: [user({ type: 'text', text: `Use the following context: ${context}` })] };
  });

  // ── logging and completion (2025) ──
  server.server.setRequestHandler('logging/setLevel', async (request) => {
    server.server.notification({ method: 'notifications/message', params: { level: 'info', logger: 'everything', data: `Log level set to: ${request.params.level}` } }).catch(() => {});
    return {};
  });
  server.server.setRequestHandler('completion/complete', async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return server;
}

// ── HTTP: the 2026 leg (stateless) and the 2025 leg (sessions) on one endpoint ──
const modern = createMcpHandler(() => build(), { onerror: (error) => console.error('modern leg:', error) });
const modernNode = toNodeHandler(modern);
const hostGuard = localhostHostValidation();

/** A small event store so a 2025 client can resume a closed stream (Last-Event-ID). */
const events = new Map();
const eventStore = {
  async storeEvent(streamId, message) {
    const id = `${streamId}::${String(Date.now()).padStart(15, '0')}_${randomUUID()}`;
    events.set(id, { streamId, message });
    return id;
  },
  async replayEventsAfter(lastEventId, { send }) {
    const streamId = lastEventId.split('::')[0];
    const later = [...events.entries()].filter(([id, event]) => event.streamId === streamId && id > lastEventId).sort(([a], [b]) => a.localeCompare(b));
    for (const [id, { message }] of later) await send(id, message);
    return streamId;
  },
};

const rpcError = (res, status, code, message) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString('utf8');
  return raw === '' ? undefined : JSON.parse(raw);
}

const http = createServer(async (req, res) => {
  try {
    if (!hostGuard(req, res)) return;
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') return void res.writeHead(404).end();
    const header = (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const sessionId = header('mcp-session-id');
    if (req.method === 'POST') {
      let body;
      try {
        body = await readJson(req);
      } catch {
        return rpcError(res, 400, -32700, 'Parse error');
      }
      const inbound = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: header('mcp-protocol-version'), mcpMethodHeader: header('mcp-method'), body });
      if (inbound.kind !== 'legacy') return void (await modernNode(req, res, body));
      if (sessionId && transports.has(sessionId)) return void (await transports.get(sessionId).handleRequest(req, res, body));
      if (sessionId) return rpcError(res, 404, -32001, 'Session not found');
      if (!isInitializeRequest(body)) return rpcError(res, 400, -32000, 'Bad Request: Session ID required');
      const server = build();
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore,
        retryInterval: 1000,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
        server.close().catch(() => {});
      };
      await server.connect(transport);
      return void (await transport.handleRequest(req, res, body));
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!sessionId) return void res.writeHead(400).end('Missing session ID');
      const transport = transports.get(sessionId);
      if (!transport) return void res.writeHead(404).end('Session not found');
      return void (await transport.handleRequest(req, res));
    }
    res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
  } catch (error) {
    console.error('request failed:', error);
    if (!res.headersSent) rpcError(res, 500, -32603, 'Internal server error');
  }
});

http.listen(Number(values.port), '127.0.0.1', () => {
  const { port } = http.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp`, port })}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
