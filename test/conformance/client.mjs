#!/usr/bin/env node
/**
 * The client the conformance suite spawns for its client scenarios:
 *
 *   MCP_CONFORMANCE_SCENARIO=<scenario> node test/conformance/client.mjs <plinth|sdk> <server-url>
 *
 * `plinth`: plinth's own MCP client — a kernel booted as the CLI boots it (the
 * builtin plugins from the built `dist/`, a throwaway home and workspace) with
 * one `mcpServers` entry for the suite's URL, driven through the `mcp` service
 * (`start`, `tools`, `callTool`, `resources`, `readResource`, `prompts`,
 * `getPrompt`), the host's `mcp:elicitation`/`mcp:sampling`/`mcp:roots`
 * services and the `oauth` service (a sign-in channel that plays the browser).
 *
 * `sdk`: the bare MCP SDK v2 `Client` doing the same, the baseline.
 *
 * The wire the suite asks for arrives as MCP_CONFORMANCE_PROTOCOL_VERSION
 * (2026-07-28: the stateless era; else 2025-11-25). For plinth it becomes the
 * server's `protocol` setting ("legacy" or "2026-07-28") unless
 * PLINTH_CONFORMANCE_PROTOCOL names another value ("auto", or "none" to set
 * nothing: plinth's default).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, auth, computeScopeUnion, extractWWWAuthenticateParams, isStrictScopeSuperset } from '@modelcontextprotocol/client';

const [mode, serverUrl] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const wire = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '2025-11-25';
const modern = wire === '2026-07-28';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const log = (...parts) => process.stderr.write(`[${mode} ${scenario}] ${parts.join(' ')}\n`);

/** What a client does in each scenario, against an adapter over plinth or the bare SDK. */
const CALLBACK = 'http://127.0.0.1:3000/callback';
const CIMD = 'https://conformance-test.local/client-metadata.json';

async function play(mcp) {
  const auth = scenario.startsWith('auth/');
  await mcp.connect({
    capabilities:
      scenario === 'request-metadata' || scenario === 'sep-2322-client-request-state'
        ? { roots: { listChanged: true }, sampling: {}, elicitation: {} }
        : scenario === 'elicitation-sep1034-client-defaults'
          ? { elicitation: { form: { applyDefaults: true } } }
          : {},
    auth,
  });
  if (scenario === 'request-metadata') return;
  const tools = await mcp.tools();
  log('tools:', tools.map((tool) => tool.name).join(', '));
  const has = (name) => tools.some((tool) => tool.name === name);
  switch (scenario) {
    case 'tools_call':
      if (has('add_numbers')) await mcp.call('add_numbers', { a: 5, b: 3 });
      break;
    case 'elicitation-sep1034-client-defaults':
      await mcp.call('test_client_elicitation_defaults', {});
      break;
    case 'sse-retry':
      await mcp.call('test_reconnection', {});
      break;
    case 'http-standard-headers': {
      if (tools[0]) await mcp.call(tools[0].name, {});
      const resources = await mcp.resources();
      if (resources[0]) await mcp.read(resources[0].uri);
      const prompts = await mcp.prompts();
      if (prompts[0]) await mcp.prompt(prompts[0].name, {});
      break;
    }
    case 'http-custom-headers':
      for (const call of context.toolCalls ?? []) await mcp.call(call.name, call.arguments);
      break;
    case 'http-invalid-tool-headers':
      for (const tool of tools) await mcp.call(tool.name, { region: 'us-west1' }).catch((error) => log('refused:', String(error)));
      break;
    case 'sep-2322-client-request-state':
      for (const name of ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated', 'test_mrtr_no_result_type']) {
        await mcp.call(name, {}).catch((error) => log(name, 'failed:', String(error)));
      }
      break;
    case 'json-schema-2020-12-preservation': {
      const focal = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
      if (!focal) throw new Error('json_schema_2020_12_tool not listed');
      await mcp.call('json_schema_echo', { schema: focal.inputSchema });
      break;
    }
    default:
      if (auth && has('test-tool')) await mcp.call('test-tool', {});
  }
}

// ── the bare SDK v2 client ──

/** An OAuth provider that plays the browser: it fetches the authorization URL and keeps the code it redirects to. */
function browserlessProvider() {
  const state = { client: undefined, tokens: undefined, verifier: undefined, discovery: undefined, redirect: undefined };
  if (scenario === 'auth/pre-registration') state.client = { client_id: context.client_id, client_secret: context.client_secret, redirect_uris: [CALLBACK] };
  return {
    store: state,
    redirectUrl: CALLBACK,
    clientMetadata: { client_name: 'plinth-conformance-sdk', redirect_uris: [CALLBACK] },
    clientMetadataUrl: scenario === 'auth/pre-registration' ? undefined : CIMD,
    clientInformation: () => state.client,
    saveClientInformation: (info) => void (state.client = info),
    tokens: () => state.tokens,
    saveTokens: (tokens) => void (state.tokens = tokens),
    saveCodeVerifier: (verifier) => void (state.verifier = verifier),
    codeVerifier: () => state.verifier,
    saveDiscoveryState: (discovery) => void (state.discovery = discovery),
    discoveryState: () => state.discovery,
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'client') state.client = undefined;
      if (scope === 'all' || scope === 'tokens') state.tokens = undefined;
      if (scope === 'all' || scope === 'verifier') state.verifier = undefined;
      if (scope === 'all' || scope === 'discovery') state.discovery = undefined;
    },
    redirectToAuthorization: async (url) => {
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (!location) throw new Error(`no redirect from ${url}`);
      state.redirect = new URL(location);
    },
  };
}

/**
 * A fetch that signs in when the server asks: Bearer on every request; a 401
 * (discovery again: the authorization server may have moved) or a 403 asking
 * for more scope (the union with what was granted) runs the SDK's `auth()`,
 * plays the browser, exchanges the code (with the redirect's `iss`), and sends
 * the request once more. Three authorizations in all at most.
 */
function signingFetch(provider) {
  let attempts = 0;
  return async (input, init) => {
    const send = async () => {
      const headers = new Headers(init?.headers);
      const tokens = provider.tokens();
      if (tokens) headers.set('Authorization', `Bearer ${tokens.access_token}`);
      return fetch(input, { ...init, headers });
    };
    const response = await send();
    if ((response.status !== 401 && response.status !== 403) || attempts >= 3) return response;
    attempts++;
    const { resourceMetadataUrl, scope: challenged } = extractWWWAuthenticateParams(response);
    const granted = provider.tokens()?.scope;
    const scope = response.status === 403 ? computeScopeUnion(granted, challenged) : challenged;
    if (response.status === 401) provider.invalidateCredentials('discovery');
    const options = { serverUrl: new URL(serverUrl), resourceMetadataUrl, scope, fetchFn: fetch };
    let result = await auth(provider, { ...options, forceReauthorization: isStrictScopeSuperset(scope, granted) });
    if (result === 'REDIRECT') {
      const landed = provider.store.redirect;
      provider.store.redirect = undefined;
      result = await auth(provider, { ...options, authorizationCode: landed?.searchParams.get('code') ?? '', iss: landed?.searchParams.get('iss') ?? undefined });
    }
    if (result !== 'AUTHORIZED') throw new UnauthorizedError(`sign-in ended with ${result}`);
    return send();
  };
}

function sdkAdapter() {
  let client;
  const provider = browserlessProvider();
  return {
    connect: async ({ capabilities, auth: signsIn }) => {
      client = new Client({ name: 'plinth-conformance-sdk', version: '1.0.0' }, { capabilities, ...(modern && { versionNegotiation: { mode: 'auto' } }) });
      if (capabilities.elicitation) client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: scenario === 'sep-2322-client-request-state' ? { confirmed: true } : {} }));
      if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'conformance' }));
      if (capabilities.roots) client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///conformance', name: 'conformance' }] }));
      await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), signsIn ? { fetch: signingFetch(provider) } : {}));
    },
    tools: async () => (await client.listTools()).tools,
    call: (name, args) => client.callTool({ name, arguments: args }),
    resources: async () => (await client.listResources()).resources,
    read: (uri) => client.readResource({ uri }),
    prompts: async () => (await client.listPrompts()).prompts,
    prompt: (name, args) => client.getPrompt({ name, arguments: args }),
    close: () => client?.close(),
  };
}

// ── plinth's client ──

async function plinthAdapter() {
  const { createKernel } = await import('../../dist/kernel/index.js');
  const base = await mkdtemp(join(tmpdir(), 'plinth-conformance-'));
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await (await import('node:fs/promises')).mkdir(workspace, { recursive: true });
  await (await import('node:fs/promises')).mkdir(home, { recursive: true });
  const chosen = process.env.PLINTH_CONFORMANCE_PROTOCOL ?? (modern ? '2026-07-28' : 'legacy');
  const oauth = scenario.startsWith('auth/')
    ? scenario === 'auth/pre-registration'
      ? { clientId: context.client_id, clientSecret: context.client_secret }
      : { clientMetadataUrl: CIMD }
    : undefined;
  const settings = (withProtocol) => ({
    mcpServers: { conf: { url: serverUrl, ...(withProtocol && chosen !== 'none' && { protocol: chosen }), ...(oauth && { oauth }) } },
    plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, oauth: { settings: { storage: 'file', openBrowser: false } } },
  });
  let kernel;
  /** Boots a kernel on the settings; a plinth that does not know the `protocol` setting yet (before the 2026 era) boots again without it. */
  const boot = async (withProtocol) => {
    await writeFile(join(home, 'settings.json'), JSON.stringify(settings(withProtocol)));
    kernel = createKernel({ home, workspace, pluginDirs: [], logSink: (entry) => log('log:', JSON.stringify(entry)) });
    await kernel.prepare();
    kernel.provide('mcp:elicitation', async () => ({ action: 'accept', content: scenario === 'sep-2322-client-request-state' ? { confirmed: true } : {} }));
    if (capabilities.sampling) kernel.provide('mcp:sampling', async () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'conformance' }));
    kernel.provide('mcp:roots', async () => [{ uri: 'file:///conformance', name: 'conformance' }]);
    await kernel.boot();
    mcp = await kernel.get('mcp');
    if (withProtocol && chosen !== 'none' && mcp.definition('conf') === undefined) {
      log(`this plinth has no "protocol" server setting: running with its default instead of "${chosen}"`);
      await kernel.shutdown();
      await boot(false);
    }
  };
  let mcp;
  let capabilities = {};
  const toolName = (name) => `conf__${name}`;
  const start = async () => {
    const status = await mcp.start('conf');
    log('status:', JSON.stringify({ state: status.state, era: status.era, protocolVersion: status.protocolVersion, error: status.error?.code }));
    return status;
  };
  return {
    connect: async ({ capabilities: wanted, auth }) => {
      capabilities = wanted;
      await boot(true);
      if (auth) {
        const service = await kernel.get('oauth');
        service.hooks.channel.tap('conformance', () => {
          let landed;
          return {
            redirectUrl: CALLBACK,
            open: async (url) => {
              const response = await fetch(url, { redirect: 'manual' });
              const location = response.headers.get('location');
              if (!location) throw new Error(`no redirect from ${url}`);
              landed = new URL(location);
              log('authorization redirected to', landed.origin + landed.pathname, 'with', [...landed.searchParams.keys()].join(','), 'iss=' + (landed.searchParams.get('iss') ?? '(none)'));
            },
            callback: async () => landed,
            close: async () => {},
          };
        });
        let status = await start();
        for (let round = 0; status.state !== 'connected' && round < 3; round++) {
          await service.login('conf');
          status = await start();
        }
        return;
      }
      const status = await start();
      if (status.state !== 'connected') throw new Error(`not connected: ${JSON.stringify(status.error ?? status.state)}`);
    },
    tools: async () => mcp.tools().filter((tool) => tool.server === 'conf').map((tool) => ({ ...tool, name: tool.tool })),
    call: async (name, args) => {
      const result = await mcp.callTool(toolName(name), args);
      if (!result.ok) log('call', name, 'answered', JSON.stringify(result.error ?? result.text));
      return result;
    },
    resources: () => mcp.resources('conf'),
    read: (uri) => mcp.readResource('conf', uri),
    prompts: () => mcp.prompts('conf'),
    prompt: (name, args) => mcp.getPrompt('conf', name, args),
    close: async () => {
      await kernel?.shutdown().catch(() => {});
      await rm(base, { recursive: true, force: true });
    },
  };
}

if ((mode !== 'plinth' && mode !== 'sdk') || !serverUrl || !scenario) {
  process.stderr.write('usage: MCP_CONFORMANCE_SCENARIO=<scenario> node test/conformance/client.mjs <plinth|sdk> <server-url>\n');
  process.exit(2);
}
const adapter = mode === 'sdk' ? sdkAdapter() : await plinthAdapter();
let code = 0;
try {
  await play(adapter);
} catch (error) {
  log('failed:', error instanceof Error ? (error.stack ?? error.message) : String(error));
  code = 1;
} finally {
  await adapter.close();
}
process.exit(code);
