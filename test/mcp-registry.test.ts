/**
 * MCP servers from MCP registries (issue 31, first slice), through the real CLI: server.json
 * documents published with `plinth registry publish-server` into a registry folder, served by
 * `plinth registry serve` on 127.0.0.1 (the MCP Registry's API v0.1), configured as a
 * subregistry in `mcpRegistries`, and found with `plinth mcp search` and `plinth mcp info`
 * (which registry each result comes from; deprecated warned, deleted marked); the client's
 * errors against what is not a registry, and paging through cursors; `plinth mcp install` of an
 * npm server (pinned to the exact version, its secret in the secret store and only referenced from
 * settings) and of a remote with URL variables and a secret header (started against a real MCP server
 * on 127.0.0.1, the header read from the store); a deleted server refused.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, ROOT, type Sandbox, cleanEnv, ensureBuilt, expectExit, json, run, sandbox, start } from './support/cli.js';
import { publishServer } from '../registry/mcp-servers.js';
import { serveRegistry } from '../registry/server.js';
import { configuredMcpRegistries, listAll, listServers, serverVersion } from '../plugins/mcp/registry/client.js';

const TIMEOUT = 120_000;
const SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** An npm server with a secret and a plain environment variable and a positional argument. */
const weather = (version: string) => ({
  $schema: SCHEMA,
  name: 'io.github.acme/weather',
  title: 'Acme Weather',
  description: 'Forecasts and alerts for any city',
  version,
  packages: [
    {
      registryType: 'npm',
      identifier: '@acme/weather-mcp',
      version,
      transport: { type: 'stdio' },
      packageArguments: [{ type: 'positional', valueHint: 'city', description: 'Default city', isRequired: true }],
      environmentVariables: [
        { name: 'WEATHER_API_KEY', description: 'API key', isRequired: true, isSecret: true },
        { name: 'WEATHER_UNITS', description: 'metric or imperial', default: 'metric' },
      ],
    },
  ],
});
const analytics = {
  $schema: SCHEMA,
  name: 'com.example/analytics',
  description: 'Business analytics over a tenant URL',
  version: '2.0.0',
  remotes: [{ type: 'streamable-http', url: 'https://{tenant}.analytics.example.com/mcp', variables: { tenant: { description: 'Your tenant', isRequired: true } } }],
};
const oldWeather = { $schema: SCHEMA, name: 'io.github.acme/old-weather', description: 'The first weather server', version: '0.9.0', packages: [{ registryType: 'npm', identifier: 'old-weather-mcp', version: '0.9.0', transport: { type: 'stdio' } }] };
const gone = { $schema: SCHEMA, name: 'io.github.acme/gone-weather', description: 'Weather, withdrawn', version: '1.0.0', packages: [{ registryType: 'npm', identifier: 'gone-weather-mcp', version: '1.0.0', transport: { type: 'stdio' } }] };

const SECRET = 'sk-weather-do-not-leak-5150';
const HEADER_SECRET = 'tok-analytics-do-not-leak-8080';
/** The secret store as a file under the sandbox's home (no keychain on a test machine). */
const FILE_STORE = { PLINTH_OAUTH_STORAGE: 'file' };

let b: Sandbox;
let folder: string;
let serve: ChildProcess;
let url: string;

async function publish(doc: object, status?: string) {
  const file = join(b.base, `${(doc as { name: string }).name.replace('/', '_')}-${(doc as { version: string }).version}.json`);
  await writeFile(file, JSON.stringify(doc, null, 2));
  return run(b, ['registry', 'publish-server', file, '--to', folder, ...(status ? ['--status', status] : [])]);
}

beforeAll(async () => {
  ensureBuilt();
  b = await sandbox('plinth-mcp-registry-');
  folder = join(b.base, 'registry');
  for (const [doc, status] of [[weather('1.0.0')], [weather('1.1.0')], [analytics], [oldWeather, 'deprecated'], [gone, 'deleted']] as [object, string?][]) {
    expectExit(await publish(doc, status), 0);
  }
  // Many servers, for paging (published through the same code the command runs).
  for (let i = 0; i < 12; i++) {
    const file = join(b.base, `bulk-${i}.json`);
    await writeFile(file, JSON.stringify({ name: `io.github.bulk/server-${String(i).padStart(2, '0')}`, description: 'bulk', version: '1.0.0', remotes: [{ type: 'sse', url: `https://bulk${i}.example.com/sse` }] }));
    await publishServer(folder, file);
  }
  serve = start(b, ['registry', 'serve', folder, '--json']);
  url = await new Promise<string>((resolve, reject) => {
    serve.once('exit', (code) => reject(new Error(`registry serve exited with ${code}`)));
    createInterface({ input: serve.stdout! }).on('line', (line) => {
      const match = /"url":\s*"([^"]+)"/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  await b.settings({ mcpRegistries: [{ name: 'acme', url }] });
}, 300_000);

afterAll(async () => {
  if (serve && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve.once('exit', resolve));
    serve.kill('SIGTERM');
    await exited;
  }
  await b?.remove();
});

describe('plinth registry publish-server and registry serve', () => {
  test('the folder answers /v0.1/servers/{name}/versions and /versions/latest, newest first, with status', async () => {
    const versions = await (await fetch(`${url}v0.1/servers/${encodeURIComponent('io.github.acme/weather')}/versions`)).json() as any;
    expect(versions.servers.map((s: any) => s.server.version)).toEqual(['1.1.0', '1.0.0']);
    const latest = await (await fetch(`${url}v0.1/servers/${encodeURIComponent('io.github.acme/weather')}/versions/latest`)).json() as any;
    expect(latest.server.version).toBe('1.1.0');
    expect(latest._meta['io.modelcontextprotocol.registry/official']).toMatchObject({ status: 'active', isLatest: true });
    const missing = await fetch(`${url}v0.1/servers/${encodeURIComponent('io.github.acme/nothing')}/versions/latest`);
    expect(missing.status).toBe(404);
  }, TIMEOUT);

  test('a published version never changes; its status may', async () => {
    const changed = await publish({ ...weather('1.0.0'), description: 'other' });
    expectExit(changed, 1);
    expect(changed.stderr).toContain('PLN_E_REGISTRY_VERSION_EXISTS');
    expectExit(await publish(weather('1.0.0')), 0);
    const file = join(b.base, 'bad.json');
    await writeFile(file, JSON.stringify({ name: 'io.github.acme/bad', version: '1.0.0', packages: [{ registryType: 'npm', transport: { type: 'stdio' } }] }));
    const bad = await run(b, ['registry', 'publish-server', file, '--to', folder]);
    expectExit(bad, 1);
    expect(bad.stderr).toContain('PLN_E_REGISTRY_SERVER_JSON');
    expect(bad.stderr).toContain('packages[0].identifier');
  }, TIMEOUT);
});

describe('plinth mcp search and mcp info', () => {
  test('search finds the latest of each matching server, says which registry, marks deprecated and deleted', async () => {
    const found = await run(b, ['mcp', 'search', 'weather', '--json']);
    expectExit(found, 0);
    const results = json(found).results as { name: string; version: string; status: string; registry: string }[];
    expect(results.map((r) => [r.name, r.version, r.status, r.registry]).sort()).toEqual([
      ['io.github.acme/gone-weather', '1.0.0', 'deleted', 'acme'],
      ['io.github.acme/old-weather', '0.9.0', 'deprecated', 'acme'],
      ['io.github.acme/weather', '1.1.0', 'active', 'acme'],
    ]);
    const text = await run(b, ['mcp', 'search', 'weather']);
    expectExit(text, 0);
    expect(text.stdout).toMatch(/io\.github\.acme\/gone-weather\s+1\.0\.0\s+DELETED\s+acme/);
    expect(text.stdout).toMatch(/io\.github\.acme\/old-weather\s+0\.9\.0\s+DEPRECATED\s+acme/);
  }, TIMEOUT);

  test('search follows the cursor through every page', async () => {
    const all = await listAll({ name: 'acme', url: new URL(url) }, { search: 'bulk', version: 'latest', limit: 5 });
    expect(all.map((s) => s.server.name)).toEqual(Array.from({ length: 12 }, (_, i) => `io.github.bulk/server-${String(i).padStart(2, '0')}`));
    const first = await listServers({ name: 'acme', url: new URL(url) }, { search: 'bulk', limit: 5 });
    expect(first.servers).toHaveLength(5);
    expect(first.metadata?.nextCursor).toBeTruthy();
  }, TIMEOUT);

  test('info shows packages, inputs, remotes and versions; an older version by @version; deprecated warns, deleted is marked', async () => {
    const info = await run(b, ['mcp', 'info', 'io.github.acme/weather']);
    expectExit(info, 0);
    expect(info.stdout).toContain('io.github.acme/weather@1.1.0');
    expect(info.stdout).toContain('registry:  acme');
    expect(info.stdout).toContain('package:   npm @acme/weather-mcp@1.1.0 (stdio); env: WEATHER_API_KEY (secret) (required), WEATHER_UNITS');
    expect(info.stdout).toContain('versions:  1.1.0 (latest), 1.0.0');
    const older = json(await run(b, ['mcp', 'info', 'io.github.acme/weather@1.0.0', '--json']));
    expect(older).toMatchObject({ registry: 'acme', name: 'io.github.acme/weather', version: '1.0.0', status: 'active' });
    const remote = await run(b, ['mcp', 'info', 'com.example/analytics']);
    expect(remote.stdout).toContain('remote:    streamable-http https://{tenant}.analytics.example.com/mcp; variables: tenant');
    const deprecated = await run(b, ['mcp', 'info', 'io.github.acme/old-weather']);
    expectExit(deprecated, 0);
    expect(deprecated.stderr).toContain('is deprecated in registry "acme"');
    const deleted = await run(b, ['mcp', 'info', 'io.github.acme/gone-weather']);
    expect(deleted.stderr).toContain('is DELETED from registry "acme"');
    const none = await run(b, ['mcp', 'info', 'io.github.acme/nothing']);
    expectExit(none, 1);
    expect(none.stderr).toContain('PLN_E_MCP_REGISTRY_NOT_FOUND');
  }, TIMEOUT);
});

describe('a subregistry that needs a token', () => {
  test('without it: refused, with the fix; with "token": "${env:…}": answered; the token is in no message', async () => {
    const token = 'reg-token-do-not-leak-77';
    const served = await serveRegistry(folder, { token });
    try {
      const bare = { name: 'private', url: new URL(served.url) };
      const refused = await listServers(bare, {}).catch((error: unknown) => error as Error & { code: string; hint?: string });
      expect(refused).toMatchObject({ code: 'PLN_E_MCP_REGISTRY_UNREACHABLE', message: expect.stringContaining('HTTP 401') });
      expect((refused as { hint?: string }).hint).toContain('"token": "${env:NAME}"');
      const layers = [{ scope: 'user' as const, file: 'settings.json', settings: { mcpRegistries: [{ name: 'private', url: served.url, token: '${env:ACME_MCP_TOKEN}' }] } }];
      const [registry] = configuredMcpRegistries(layers, { ACME_MCP_TOKEN: token });
      const latest = await serverVersion(registry!, 'io.github.acme/weather', 'latest');
      expect(latest?.server.version).toBe('1.1.0');
      const unset = (() => {
        try {
          configuredMcpRegistries(layers, {});
        } catch (error) {
          return error as Error & { code: string };
        }
      })();
      expect(unset).toMatchObject({ code: 'PLN_E_MCP_REGISTRY_CONFIG', message: expect.stringContaining('ACME_MCP_TOKEN, which is not set') });
      expect(JSON.stringify(refused) + String((refused as Error).message)).not.toContain(token);
    } finally {
      await served.close();
    }
  }, TIMEOUT);
});

describe('the registry client says what is wrong', () => {
  test('nothing listening: unreachable; a web page: not a registry; a wrong document: the field', async () => {
    const page = createServer((req, res) => {
      if (req.url?.startsWith('/v0.1/servers?search=mixed')) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ servers: [{ server: { name: 'io.github.x/good', version: '1.0.0' } }, { server: { name: 'io.github.x/bad' } }], metadata: { count: 2 } }));
      }
      if (req.url?.startsWith('/v0.1/servers/')) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ server: { name: 'io.github.x/y' } }));
      }
      res.setHeader('content-type', 'text/html');
      res.end('<html>hello</html>');
    });
    await new Promise<void>((done) => page.listen(0, '127.0.0.1', done));
    const port = (page.address() as AddressInfo).port;
    try {
      const web = { name: 'web', url: new URL(`http://127.0.0.1:${port}/`) };
      await expect(listServers(web, {})).rejects.toMatchObject({ code: 'PLN_E_MCP_REGISTRY_NOT_A_REGISTRY' });
      // One bad entry in a list is left out and said, not the whole page.
      const mixed = await listServers(web, { search: 'mixed' });
      expect(mixed.servers.map((s) => s.server.name)).toEqual(['io.github.x/good']);
      expect(mixed.skipped).toEqual([{ registry: 'web', index: 1, problem: expect.stringContaining('servers[1].server.version') }]);
      await expect(serverVersion(web, 'io.github.x/y', 'latest')).rejects.toMatchObject({ code: 'PLN_E_MCP_REGISTRY_DOCUMENT', message: expect.stringContaining('server.version') });
    } finally {
      await new Promise<void>((done) => page.close(() => done()));
    }
    await expect(listServers({ name: 'closed', url: new URL(`http://127.0.0.1:${port}/`) }, {})).rejects.toMatchObject({ code: 'PLN_E_MCP_REGISTRY_UNREACHABLE' });
    // From the command line, with the registry named in the message.
    const other = await sandbox('plinth-mcp-registry-');
    try {
      await other.settings({ mcpRegistries: [{ name: 'closed', url: `http://127.0.0.1:${port}` }] });
      const result = await run(other, ['mcp', 'search', 'x']);
      expectExit(result, 1);
      expect(result.stderr).toContain('PLN_E_MCP_REGISTRY_UNREACHABLE');
      expect(result.stderr).toContain('"closed"');
      await other.settings({ mcpRegistries: [{ name: 'bad', url: 'ftp://x' }] });
      const config = await run(other, ['mcp', 'search', 'x']);
      expect(config.stderr).toContain('PLN_E_MCP_REGISTRY_CONFIG');
      expect(config.stderr).toContain('mcpRegistries[0].url');
      const validate = await run(other, ['config', 'validate']);
      expectExit(validate, 3);
      expect(validate.stdout + validate.stderr).toContain('PLN_E_MCP_REGISTRY_CONFIG: mcpRegistries[0].url');
      // A workspace file cannot choose where servers come from: its mcpRegistries are ignored.
      await other.settings({});
      await mkdir(join(other.workspace, '.plinth'), { recursive: true });
      await writeFile(join(other.workspace, '.plinth', 'settings.json'), JSON.stringify({ mcpRegistries: [{ name: 'project', url }] }));
      const fromWorkspace = await run(other, ['mcp', 'search', 'weather']);
      expectExit(fromWorkspace, 1);
      expect(fromWorkspace.stderr).toContain('PLN_E_MCP_REGISTRY_CONFIG');
      expect(fromWorkspace.stderr).toContain('no MCP registry is configured');
    } finally {
      await other.remove();
    }
  }, TIMEOUT);
});

describe('plinth mcp install', () => {
  /** Every file under the sandbox's home and workspace but the encrypted store, as text. */
  async function settingsText(box: Sandbox): Promise<string> {
    const files = [join(box.home, 'settings.json'), join(box.workspace, '.plinth', 'settings.json')];
    return (await Promise.all(files.map((f) => readFile(f, 'utf8').catch(() => '')))).join('\n');
  }

  test('an npm server: npx -y pinned to the exact version, arguments and plain variables written, the secret stored and referenced', async () => {
    const result = await run(b, ['mcp', 'install', 'io.github.acme/weather@1.0.0', '--arg', 'city=Lyon', '--env', `WEATHER_API_KEY=${SECRET}`, '--yes', '--json'], FILE_STORE);
    expectExit(result, 0);
    expect(json(result)).toMatchObject({ installed: 'weather', from: { registry: 'acme', name: 'io.github.acme/weather', version: '1.0.0', status: 'active' }, scope: 'user', secrets: ['mcp-install:weather:WEATHER_API_KEY'] });
    const settings = JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8'));
    expect(settings.mcpServers.weather).toEqual({
      command: 'npx',
      args: ['-y', '@acme/weather-mcp@1.0.0', 'Lyon'],
      env: { WEATHER_API_KEY: '${secret:mcp-install:weather:WEATHER_API_KEY}', WEATHER_UNITS: 'metric' },
    });
    expect(await settingsText(b)).not.toContain(SECRET);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    // The value is in the store's encrypted file, not in any plain file of the home.
    const secretsFolder = await readdir(join(b.home, 'secrets'));
    expect(secretsFolder).toContain('secrets.enc');
    for (const f of secretsFolder) expect(await readFile(join(b.home, 'secrets', f), 'utf8').catch(() => '')).not.toContain(SECRET);
    // `mcp get` shows the reference, never the value.
    const get = await run(b, ['mcp', 'get', 'weather'], FILE_STORE);
    expect(get.stdout + get.stderr).not.toContain(SECRET);
    expect(get.stdout).toContain('@acme/weather-mcp@1.0.0');
  }, TIMEOUT);

  test('latest by default; a required input missing names its flag; a name taken is refused', async () => {
    const missing = await run(b, ['mcp', 'install', 'io.github.acme/weather', '--name', 'weather2', '--yes'], FILE_STORE);
    expectExit(missing, 1);
    expect(missing.stderr).toContain('PLN_E_MCP_INSTALL_INPUT');
    expect(missing.stderr).toContain('--arg city=<value>');
    const taken = await run(b, ['mcp', 'install', 'io.github.acme/weather', '--arg', 'city=Oslo', '--env', `WEATHER_API_KEY=${SECRET}`, '--yes'], FILE_STORE);
    expectExit(taken, 1);
    expect(taken.stderr).toContain('PLN_E_MCP_SERVER_EXISTS');
    const latest = await run(b, ['mcp', 'install', 'io.github.acme/weather', '--name', 'weather-latest', '--arg', 'city=Oslo', '--env', `WEATHER_API_KEY=${SECRET}`, '--scope', 'workspace', '--yes'], FILE_STORE);
    expectExit(latest, 0);
    const workspace = JSON.parse(await readFile(join(b.workspace, '.plinth', 'settings.json'), 'utf8'));
    expect(workspace.mcpServers['weather-latest'].args).toEqual(['-y', '@acme/weather-mcp@1.1.0', 'Oslo']);
    expect(await settingsText(b)).not.toContain(SECRET);
  }, TIMEOUT);

  test('on a terminal, a required secret without a flag is asked, not echoed, and stored', async () => {
    const argv = [process.execPath, BIN, ...b.dirs, 'mcp', 'install', 'io.github.acme/weather@1.0.0', '--name', 'weather-tty', '--arg', 'city=Paris', '--yes'];
    const screen = await new Promise<{ code: number; screen: string }>((resolve) => {
      execFile('python3', [join(ROOT, 'test', 'support', 'on-terminal.py'), JSON.stringify(argv), JSON.stringify(cleanEnv(FILE_STORE, { ci: false })), SECRET, '(secret, not shown): '], { cwd: b.workspace, timeout: 60_000 }, (error, stdout) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, screen: stdout });
      });
    });
    expect(screen.screen).toContain('The environment variable "WEATHER_API_KEY" (API key) (secret, not shown): ');
    expect(screen.code, screen.screen).toBe(0);
    expect(screen.screen).not.toContain(SECRET);
    const entry = JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8')).mcpServers['weather-tty'];
    expect(entry.env).toEqual({ WEATHER_API_KEY: '${secret:mcp-install:weather-tty:WEATHER_API_KEY}', WEATHER_UNITS: 'metric' });
  }, TIMEOUT);

  test('a deleted server is refused with the fix; a deprecated one installs with a warning', async () => {
    const deleted = await run(b, ['mcp', 'install', 'io.github.acme/gone-weather', '--yes'], FILE_STORE);
    expectExit(deleted, 1);
    expect(deleted.stderr).toContain('PLN_E_MCP_SERVER_DELETED');
    expect(deleted.stderr).toContain('plinth mcp info io.github.acme/gone-weather');
    expect(JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8')).mcpServers['gone-weather']).toBeUndefined();
    const deprecated = await run(b, ['mcp', 'install', 'io.github.acme/old-weather', '--yes'], FILE_STORE);
    expectExit(deprecated, 0);
    expect(deprecated.stderr).toContain('is deprecated in registry "acme"');
  }, TIMEOUT);

  test('a remote: its URL variable filled in, its secret header stored; it starts against a real server with the header read from the store', async () => {
    const http = spawn(process.execPath, [join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'http-server.mjs'), '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        http.once('exit', (code) => reject(new Error(`http fixture exited with ${code}`)));
        createInterface({ input: http.stdout! }).on('line', (line) => {
          if (line.startsWith('{')) resolve((JSON.parse(line) as { port: number }).port);
        });
      });
      const doc = {
        name: 'io.github.acme/local-remote',
        version: '1.0.0',
        remotes: [{ type: 'streamable-http', url: 'http://127.0.0.1:{port}/mcp', variables: { port: { description: 'The port', isRequired: true } }, headers: [{ name: 'Authorization', isSecret: true, isRequired: true }] }],
      };
      expectExit(await publish(doc), 0);
      const installed = await run(b, ['mcp', 'install', 'io.github.acme/local-remote', '--var', `port=${port}`, '--header', `Authorization: Bearer ${HEADER_SECRET}`, '--yes'], FILE_STORE);
      expectExit(installed, 0);
      const entry = JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8')).mcpServers['local-remote'];
      expect(entry).toEqual({ url: `http://127.0.0.1:${port}/mcp`, transport: 'http', headers: { Authorization: '${secret:mcp-install:local-remote:Authorization}' } });
      const status = await run(b, ['mcp', 'status', 'local-remote', '--json'], FILE_STORE);
      expect(JSON.stringify(json(status))).toContain('"connected"');
      expect(status.stdout + status.stderr + installed.stdout + installed.stderr).not.toContain(HEADER_SECRET);
      expect(await settingsText(b)).not.toContain(HEADER_SECRET);
    } finally {
      const exited = new Promise((resolve) => http.once('exit', resolve));
      http.kill('SIGTERM');
      await exited;
    }
  }, TIMEOUT);
});
