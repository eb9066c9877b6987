/**
 * `registry/server.ts` on a real registry folder over real HTTP on
 * 127.0.0.1: packuments (full and abbreviated), tarballs, ranked search,
 * conditional requests, scoped names, refused traversal, the bearer token; the
 * same folder behind a plain static server (python3's http.server); and the
 * `plinth registry` commands end to end.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssri from 'ssri';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ABBREVIATED_PACKUMENT_TYPE, abbreviatedPackumentSchema, compareSearchResults, packumentSchema, packumentUrl, prepareQuery, prepareSearchDoc, rankSearchObjects, resolveTarballUrl, searchResponseSchema, searchScore } from '../internal/registry/packument.js';
import { checkDistSignatures, registryKeysSchema } from '../internal/registry/signatures.js';
import { defaultRegistryFolder } from '../internal/registry/default.js';
import { buildDefaultRegistry } from '../registry/default-registry.js';
import { publishPlugin } from '../registry/publish.js';
import { type RegistryServer, serveRegistry } from '../registry/server.js';
import { SearchIndex } from '../registry/search-index.js';
import { readSigningKey } from '../registry/signing.js';
import { BIN, ROOT, cleanEnv, ensureBuilt, expectExit, json, plinth, sourceModules } from './support/cli.js';
import { offlineNpmEnv, shell } from './support/npm.js';

let base: string;
let folder: string;
let server: RegistryServer;

/** The plugins of the test registry: names and texts chosen for the ranking test. */
const PLUGINS: ReadonlyArray<{ name: string; description: string; keywords?: string[]; version?: string }> = [
  { name: 'notes', description: 'Keep notes; links them to git commits' },
  { name: 'git-tools', description: 'Helpers for repositories' },
  { name: 'hooks-extra', description: 'More hooks', keywords: ['git', 'hooks'] },
  { name: '@acme/git', description: 'The Acme fork' },
  { name: 'git', description: 'Git status in the prompt' },
  { name: 'weather', description: 'Forecasts', keywords: ['forecast'] },
  { name: 'digital', description: 'Digital clocks' },
];

async function plugin(name: string, manifest: Record<string, unknown>): Promise<string> {
  const dir = join(base, 'src', name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
  await writeFile(join(dir, 'README.md'), `# ${name}\n`);
  return dir;
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-registry-'));
  folder = join(base, 'registry');
  for (const p of PLUGINS) await publishPlugin(folder, await plugin(p.name, p));
  await publishPlugin(folder, await plugin('weather-2', { name: 'weather', version: '1.1.0', description: 'Forecasts, hourly', keywords: ['forecast'] }));
  server = await serveRegistry(folder);
});
afterAll(async () => {
  await server?.close();
  await rm(base, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(new URL(path, server.url), { headers });

/** A request whose path is sent exactly as written (fetch would normalise `..`). */
function rawGet(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('documents', () => {
  test('a packument, with tarball URLs on the server\'s own origin, and the tarball\'s bytes', async () => {
    const res = await get('weather');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = packumentSchema.parse(await res.json());
    expect(doc['dist-tags'].latest).toBe('1.1.0');
    expect(Object.keys(doc.versions)).toEqual(['1.0.0', '1.1.0']);
    const dist = doc.versions['1.1.0']!.dist;
    expect(dist.tarball).toBe(`${server.url}-/weather-1.1.0.tgz`);

    const tarball = await fetch(dist.tarball);
    expect(tarball.status).toBe(200);
    expect(tarball.headers.get('content-type')).toBe('application/octet-stream');
    const bytes = Buffer.from(await tarball.arrayBuffer());
    expect(bytes.equals(await readFile(join(folder, '-', 'weather-1.1.0.tgz')))).toBe(true);
    expect(ssri.checkData(bytes, dist.integrity)).toBeTruthy();
    expect(Number(tarball.headers.get('content-length'))).toBe(bytes.length);
  });

  test('Accept: application/vnd.npm.install-v1+json gets the abbreviated packument', async () => {
    const res = await get('weather', { accept: `${ABBREVIATED_PACKUMENT_TYPE}; q=1.0, application/json; q=0.8, */*` });
    expect(res.headers.get('content-type')).toMatch(/^application\/vnd\.npm\.install-v1\+json/);
    expect(res.headers.get('vary')).toBe('Accept');
    const raw = (await res.json()) as Record<string, unknown>;
    const doc = abbreviatedPackumentSchema.parse(raw);
    expect(doc.modified).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(Object.keys(raw).sort()).toEqual(['dist-tags', 'modified', 'name', 'versions']);
    const version = doc.versions['1.1.0'] as Record<string, unknown>;
    expect(Object.keys(version).sort()).toEqual(['dependencies', 'dist', 'kernel', 'name', 'version']);
    expect(version.kernel).toBe('^1.0.0');
    expect((version.dist as { tarball: string }).tarball).toBe(`${server.url}-/weather-1.1.0.tgz`);
  });

  test('scoped names: @scope%2fname, @scope%2Fname and @scope/name', async () => {
    expect(packumentUrl(server.url, '@acme/git').href).toBe(`${server.url}@acme%2fgit`);
    for (const path of ['@acme%2fgit', '@acme%2Fgit', '@acme/git']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      const doc = packumentSchema.parse(await res.json());
      expect(doc.name).toBe('@acme/git');
      const tarball = await fetch(doc.versions['1.0.0']!.dist.tarball);
      expect(tarball.status).toBe(200);
    }
  });

  test('GET /<name>/<version or dist-tag>: one version\'s document', async () => {
    for (const [path, version] of [['weather/1.0.0', '1.0.0'], ['weather/latest', '1.1.0'], ['@acme%2fgit/1.0.0', '1.0.0'], ['@acme/git/latest', '1.0.0']] as const) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      const doc = (await res.json()) as { version: string; dist: { tarball: string } };
      expect(doc.version, path).toBe(version);
      expect(doc.dist.tarball.startsWith(server.url), path).toBe(true);
    }
    expect((await get('weather/9.9.9')).status).toBe(404);
    expect((await get('weather/1.0.0/extra')).status).toBe(404);
  });

  test('unknown names, unknown tarballs and other methods are JSON errors', async () => {
    const missing = await get('no-such-plugin');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'no package named "no-such-plugin"' });
    expect((await get('-/no-such-1.0.0.tgz')).status).toBe(404);
    expect((await get('Not_A_Name')).status).toBe(404);
    const put = await fetch(new URL('weather', server.url), { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect((await put.json()) as object).toHaveProperty('error');
    expect(await (await get('-/ping')).json()).toEqual({});
  });

  test('HEAD answers the headers without a body', async () => {
    const res = await fetch(new URL('-/weather-1.1.0.tgz', server.url), { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });
});

describe('conditional requests', () => {
  test('ETag and If-None-Match give 304 for packuments, abbreviated packuments, search and tarballs', async () => {
    for (const [path, headers] of [
      ['weather', {}],
      ['weather', { accept: ABBREVIATED_PACKUMENT_TYPE }],
      ['-/v1/search?text=git', {}],
      ['-/weather-1.0.0.tgz', {}],
    ] as const) {
      const first = await get(path, headers);
      expect(first.status, path).toBe(200);
      const etag = first.headers.get('etag');
      expect(etag, path).toMatch(/^"[^"]+"$/);
      expect(first.headers.get('last-modified'), path).toBeTruthy();
      const again = await get(path, { ...headers, 'if-none-match': etag! });
      expect(again.status, path).toBe(304);
      expect((await again.arrayBuffer()).byteLength).toBe(0);
      const changed = await get(path, { ...headers, 'if-none-match': '"something-else"' });
      expect(changed.status, path).toBe(200);
    }
    // The two forms of one packument are different documents, with different tags.
    const full = (await get('weather')).headers.get('etag');
    const short = (await get('weather', { accept: ABBREVIATED_PACKUMENT_TYPE })).headers.get('etag');
    expect(full).not.toBe(short);
  });

  test('If-Modified-Since gives 304 when the document has not changed since', async () => {
    const first = await get('git');
    const since = first.headers.get('last-modified')!;
    expect((await get('git', { 'if-modified-since': since })).status).toBe(304);
    expect((await get('git', { 'if-modified-since': new Date(Date.parse(since) - 60_000).toUTCString() })).status).toBe(200);
  });

  test('a new version changes the packument\'s ETag', async () => {
    const before = (await get('digital')).headers.get('etag');
    await publishPlugin(folder, await plugin('digital-2', { name: 'digital', version: '1.0.1', description: 'Digital clocks' }));
    const after = await get('digital', { 'if-none-match': before! });
    expect(after.status).toBe(200);
    expect(Object.keys(packumentSchema.parse(await after.json()).versions)).toEqual(['1.0.0', '1.0.1']);
  });
});

describe('search', () => {
  test('ranks exact name first, then name prefix, then keywords and description', async () => {
    const res = await get('-/v1/search?text=git');
    const doc = searchResponseSchema.parse(await res.json());
    // `digital` matches inside a word of its name: last.
    expect(doc.objects.map((o) => o.package.name)).toEqual(['git', '@acme/git', 'git-tools', 'hooks-extra', 'notes', 'digital']);
    expect(doc.total).toBe(6);
    const scores = doc.objects.map((o) => o.searchScore!);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const o of doc.objects) expect(o.score!.final).toBeGreaterThan(0);
    expect(doc.objects.map((o) => o.score!.final).every((f) => f <= 1)).toBe(true);
  });

  test('the server ranks as the shared scoring function does', async () => {
    const doc = searchResponseSchema.parse(await (await get('-/v1/search?text=forecast%20hourly')).json());
    const query = prepareQuery('forecast hourly');
    const own = PLUGINS.map((p) => ({ name: p.name, score: searchScore(query, prepareSearchDoc(p.name === 'weather' ? { ...p, description: 'Forecasts, hourly' } : p)) }))
      .filter((r) => r.score > 0)
      .sort(compareSearchResults);
    expect(doc.objects.map((o) => [o.package.name, o.searchScore])).toEqual(own.map((r) => [r.name, r.score]));
    expect(doc.objects.map((o) => o.package.version)).toEqual(['1.1.0']);
  });

  test('size and from page through the results; total counts them all', async () => {
    const page = searchResponseSchema.parse(await (await get('-/v1/search?text=git&size=2&from=1')).json());
    expect(page.objects.map((o) => o.package.name)).toEqual(['@acme/git', 'git-tools']);
    expect(page.total).toBe(6);
    const none = searchResponseSchema.parse(await (await get('-/v1/search?text=zzzz')).json());
    expect(none).toMatchObject({ objects: [], total: 0 });
    const all = searchResponseSchema.parse(await (await get('-/v1/search?text=')).json());
    expect(all.total).toBe(PLUGINS.length);
  });

  test('an index of 10,000 packages answers from memory, loaded once', () => {
    const objects = Array.from({ length: 10_000 }, (_, i) => ({
      package: { name: `plugin-${i}`, version: '1.0.0', description: `generated plugin number ${i} for ${i % 7 === 0 ? 'weather' : 'tools'}`, keywords: [`k${i % 100}`] },
    }));
    const index = new SearchIndex({ objects });
    const { results, total } = index.search('plugin-42', 5);
    expect(results[0]!.object.package.name).toBe('plugin-42');
    expect(results.slice(1).map((r) => r.object.package.name)).toEqual(['plugin-420', 'plugin-4200', 'plugin-4201', 'plugin-4202']);
    expect(total).toBe(111);
    expect(index.search('weather', 20).total).toBe(1429);
  });
});

describe('safety', () => {
  test('no path leaves the folder: .., encoded .., links out, dot-files', async () => {
    await writeFile(join(base, 'secret.tgz'), 'TOP SECRET');
    await writeFile(join(base, 'secret'), JSON.stringify({ name: 'secret', versions: {} }));
    await symlink(join(base, 'secret.tgz'), join(folder, '-', 'linked-1.0.0.tgz'));
    await symlink(join(base, 'secret'), join(folder, 'linked'));
    const paths = [
      '/../secret',
      '/-/../../secret.tgz',
      '/-/..%2f..%2fsecret.tgz',
      '/-/%2e%2e/%2e%2e/secret.tgz',
      '/..%2fsecret',
      '/%2e%2e%2fsecret',
      '/-/linked-1.0.0.tgz',
      '/linked',
      '/-/.publish.lock',
      '/-/v1/..%2f..%2f..%2fsecret.tgz',
      '/-/%00.tgz',
      '/-/weather-1.0.0.tgz%00',
    ];
    for (const path of paths) {
      const res = await rawGet(server.url, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).not.toContain('SECRET');
      expect(JSON.parse(res.body), path).toHaveProperty('error');
    }
  });

  test('with a token, every request needs it (a wrong one too is refused)', async () => {
    const guarded = await serveRegistry(folder, { token: 'tok-123' });
    try {
      const url = new URL('weather', guarded.url);
      const without = await fetch(url);
      expect(without.status).toBe(401);
      expect(without.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(JSON.stringify(await without.json())).not.toContain('tok-123');
      expect((await fetch(url, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: 'Basic dG9rLTEyMw==' } })).status).toBe(401);
      expect((await fetch(new URL('-/v1/search?text=git', guarded.url))).status).toBe(401);
      expect((await fetch(new URL('-/weather-1.0.0.tgz', guarded.url))).status).toBe(401);
      const ok = await fetch(url, { headers: { authorization: 'Bearer tok-123' } });
      expect(ok.status).toBe(200);
      expect(packumentSchema.parse(await ok.json()).versions['1.0.0']!.dist.tarball.startsWith(guarded.url)).toBe(true);
    } finally {
      await guarded.close();
    }
  });

  test('a missing folder is refused with a code', async () => {
    await expect(serveRegistry(join(base, 'nowhere'))).rejects.toMatchObject({ code: 'PLN_E_REGISTRY_FOLDER' });
  });
});

describe('behind a plain static server', () => {
  let python: ChildProcess | undefined;
  afterAll(() => {
    python?.kill('SIGTERM');
  });

  test('python3 -m http.server serves the same folder: packuments, scoped names, tarballs, search', async () => {
    python = spawn('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '0'], { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      python!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /port (\d+)/.exec(out);
        if (match) resolve(`http://127.0.0.1:${match[1]}/`);
      });
      python!.on('exit', (code) => reject(new Error(`python3 exited (${code})`)));
    });
    for (const name of ['weather', '@acme/git']) {
      const res = await fetch(packumentUrl(url, name));
      expect(res.status, name).toBe(200);
      const doc = packumentSchema.parse(JSON.parse(await res.text()));
      const dist = doc.versions[doc['dist-tags'].latest!]!.dist;
      // The folder stores root-relative tarball paths; the client resolves them against the registry URL.
      const tarball = await fetch(resolveTarballUrl(url, dist.tarball));
      expect(tarball.status).toBe(200);
      expect(ssri.checkData(Buffer.from(await tarball.arrayBuffer()), dist.integrity)).toBeTruthy();
    }
    // A static server ignores the query and returns the whole index; scored by the client, it ranks the same.
    const whole = searchResponseSchema.parse(JSON.parse(await (await fetch(new URL('-/v1/search?text=git', url))).text()));
    const ranked = rankSearchObjects('git', whole.objects).map((r) => r.object.package.name);
    expect(new SearchIndex(whole).search('git', 20).results.map((r) => r.object.package.name)).toEqual(ranked);
    const served = searchResponseSchema.parse(await (await get('-/v1/search?text=git')).json()).objects.map((o) => o.package.name);
    expect(ranked).toEqual(served);
  });
});

describe('npm as a client', () => {
  test('npm install fetches packuments and tarballs from the server and checks their integrity', async () => {
    const project = join(base, 'npm-project');
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'project', version: '1.0.0', private: true }));
    const env = await offlineNpmEnv(join(base, 'npm-env'), { npm_config_registry: server.url, npm_config_offline: 'false' });
    const installed = await shell("npm install git-tools '@acme/git' weather --no-audit --no-fund", project, env);
    expect(installed.code, installed.stderr).toBe(0);
    const manifest = async (name: string) => JSON.parse(await readFile(join(project, 'node_modules', ...name.split('/'), 'manifest.json'), 'utf8')) as { name: string; version: string };
    expect(await manifest('git-tools')).toMatchObject({ name: 'git-tools', version: '1.0.0' });
    expect(await manifest('@acme/git')).toMatchObject({ name: '@acme/git' });
    expect((await manifest('weather')).version).toBe('1.1.0');
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved: string; integrity: string }> };
    expect(lock.packages['node_modules/weather']!.resolved).toBe(`${server.url}-/weather-1.1.0.tgz`);
    expect(lock.packages['node_modules/weather']!.integrity).toMatch(/^sha512-/);

    // A tarball swapped behind the packument's back: npm refuses it by the integrity the server lists.
    const tampered = join(base, 'tampered');
    await cp(folder, tampered, { recursive: true, verbatimSymlinks: true });
    await cp(join(folder, '-', 'notes-1.0.0.tgz'), join(tampered, '-', 'git-tools-1.0.0.tgz'));
    const swapped = await serveRegistry(tampered);
    try {
      const other = join(base, 'npm-project-2');
      await mkdir(other, { recursive: true });
      await writeFile(join(other, 'package.json'), JSON.stringify({ name: 'project', version: '1.0.0', private: true }));
      const refused = await shell('npm install git-tools --no-audit --no-fund', other, await offlineNpmEnv(join(base, 'npm-env-2'), { npm_config_registry: swapped.url, npm_config_offline: 'false', npm_config_fetch_retries: '0' }));
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('EINTEGRITY');
    } finally {
      await swapped.close();
    }
  }, 180_000);
});

describe('signatures', () => {
  test('a signed version carries npm\'s dist.signatures, checked against the keys the server lists', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const keyFile = join(base, 'registry-key.pem');
    await writeFile(keyFile, privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
    const target = join(base, 'signed');
    const dir = await plugin('signed-one', { description: 'signed' });
    await publishPlugin(target, dir, { signingKey: await readSigningKey(keyFile) });
    const served = await serveRegistry(target);
    try {
      const keys = registryKeysSchema.parse(await (await fetch(new URL('-/npm/v1/keys', served.url))).json());
      expect(keys.keys).toHaveLength(1);
      const doc = packumentSchema.parse(await (await fetch(packumentUrl(served.url, 'signed-one'))).json());
      const dist = doc.versions['1.0.0']!.dist;
      expect(dist.signatures?.map((s) => s.keyid)).toEqual([keys.keys[0]!.keyid]);
      expect(checkDistSignatures(keys, 'signed-one', '1.0.0', dist)).toBe('verified');
      // The metadata changed after signing, a key nobody listed, no signature at all.
      expect(checkDistSignatures(keys, 'signed-one', '1.0.0', { ...dist, integrity: 'sha512-AAAA' })).toBe('invalid');
      expect(checkDistSignatures(keys, 'signed-one', '1.0.1', dist)).toBe('invalid');
      expect(checkDistSignatures({ keys: [] }, 'signed-one', '1.0.0', dist)).toBe('unknown-key');
      expect(checkDistSignatures(keys, 'signed-one', '1.0.0', { integrity: dist.integrity })).toBe('unsigned');
      // npm's own check, as pacote does it: the key as a PEM, SHA-256, the signature in base64.
      const pem = `-----BEGIN PUBLIC KEY-----\n${keys.keys[0]!.key}\n-----END PUBLIC KEY-----`;
      expect(createVerify('SHA256').update(`signed-one@1.0.0:${dist.integrity}`).verify(pem, dist.signatures![0]!.sig, 'base64')).toBe(true);
      // A folder that signs nothing lists no keys.
      expect((await get('-/npm/v1/keys')).status).toBe(404);
    } finally {
      await served.close();
    }
  });

  test('a key that is neither ed25519 nor ECDSA P-256 is refused', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    const keyFile = join(base, 'p384.pem');
    await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await expect(readSigningKey(keyFile)).rejects.toMatchObject({ code: 'PLN_E_REGISTRY_SIGN_KEY' });
    await writeFile(join(base, 'garbage.pem'), 'not a key');
    await expect(readSigningKey(join(base, 'garbage.pem'))).rejects.toMatchObject({ code: 'PLN_E_REGISTRY_SIGN_KEY' });
  });
});

describe('plinth registry (the built CLI)', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  test('pack, publish and serve end to end', async () => {
    const dir = await plugin('cli-made', { description: 'Made on the command line', keywords: ['cli'] });
    const out = join(base, 'cli-made.tgz');
    const packed = await plinth(['registry', 'pack', dir, '--out', out, '--json']);
    expectExit(packed, 0);
    const info = json<{ name: string; file: string; size: number; integrity: string; sha256: string; shasum: string }>(packed);
    const bytes = await readFile(out);
    expect(info).toMatchObject({ name: 'cli-made', file: out, size: bytes.length });
    expect(info.integrity).toBe(ssri.fromData(bytes, { algorithms: ['sha512'] }).toString());
    expect(info.sha256).toBe(ssri.fromData(bytes, { algorithms: ['sha256'] }).toString());

    const human = await plinth(['registry', 'pack', dir, '--out', join(base, 'again.tgz')]);
    expectExit(human, 0);
    expect(human.stdout).toContain(`integrity: ${info.integrity}`);
    expect(human.stdout).toContain(`sha256:    ${info.sha256}`);
    expect((await readFile(join(base, 'again.tgz'))).equals(bytes)).toBe(true);

    // --out may name a folder (one that exists, or a new one written with a trailing slash): the tarball keeps its own name.
    await mkdir(join(base, 'tarballs'));
    for (const folder of [join(base, 'tarballs'), `${join(base, 'new-tarballs')}/`]) {
      const into = await plinth(['registry', 'pack', dir, '--out', folder, '--json']);
      expectExit(into, 0);
      const file = join(folder, 'cli-made-1.0.0.tgz');
      expect(json<{ file: string }>(into).file).toBe(file);
      expect((await readFile(file)).equals(bytes)).toBe(true);
    }

    const target = join(base, 'cli-registry');
    const published = await plinth(['registry', 'publish', out, '--to', target, '--json']);
    expectExit(published, 0);
    expect(json(published)).toMatchObject({ name: 'cli-made', version: '1.0.0', status: 'published', tarball: '-/cli-made-1.0.0.tgz' });
    const twice = await plinth(['registry', 'publish', dir, '--to', target]);
    expectExit(twice, 0);
    expect(twice.stdout).toContain('nothing changed');

    const serving = spawn(process.execPath, [BIN, 'registry', 'serve', target], { env: cleanEnv({}, { ci: true }), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        serving.stdout!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          const line = /^(http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(text);
          if (line) resolve(line[1]!);
        });
        serving.on('exit', (code) => reject(new Error(`serve exited (${code})`)));
      });
      const search = searchResponseSchema.parse(await (await fetch(new URL('-/v1/search?text=cli-made', url))).json());
      expect(search.objects.map((o) => o.package.name)).toEqual(['cli-made']);
      const doc = packumentSchema.parse(await (await fetch(packumentUrl(url, 'cli-made'))).json());
      const tarball = Buffer.from(await (await fetch(doc.versions['1.0.0']!.dist.tarball)).arrayBuffer());
      expect(tarball.equals(bytes)).toBe(true);
    } finally {
      const exited = new Promise<number | null>((resolve) => serving.on('exit', (code) => resolve(code)));
      serving.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 120_000);

  test('publishers to one folder take turns: three at once all land in the index', async () => {
    const target = join(base, 'concurrent');
    const dirs = await Promise.all(['one', 'two', 'three'].map((name) => plugin(`concurrent-${name}`, { description: `concurrent ${name}` })));
    const runs = await Promise.all(dirs.map((dir) => plinth(['registry', 'publish', dir, '--to', target, '--json'])));
    for (const r of runs) expectExit(r, 0);
    const index = searchResponseSchema.parse(JSON.parse(await readFile(join(target, '-', 'v1', 'search'), 'utf8')));
    expect(index.objects.map((o) => o.package.name)).toEqual(['concurrent-one', 'concurrent-three', 'concurrent-two']);
  }, 120_000);

  test('other commands do not load registry/ or tar: the registry commands import them when they run', async () => {
    let runs = 0;
    const loaded = async (args: string[]) => {
      const record = join(base, `imports-${++runs}.txt`);
      await writeFile(record, '');
      const result = await plinth(args, { nodeArgs: ['--import', join(ROOT, 'test', 'fixtures', 'registry', 'record-imports.mjs')], env: { RECORD_IMPORTS: record } });
      expectExit(result, 0);
      return (await readFile(record, 'utf8')).split('\n').filter((url) => url !== '');
    };
    // dist/ is bundled: which source modules a command loaded is read from its chunks' source maps.
    const help = await loaded(['--help']);
    expect(sourceModules(help)).toContain('cli/main.ts');
    expect(sourceModules(help).filter((module) => module.startsWith('registry/'))).toEqual([]);
    expect(help.filter((url) => url.includes('/node_modules/tar/'))).toEqual([]);
    const packed = await loaded(['registry', 'pack', join(base, 'src', 'git'), '--out', join(base, 'git.tgz')]);
    expect(sourceModules(packed)).toContain('registry/pack.ts');
    expect(packed.some((url) => url.includes('/node_modules/tar/'))).toBe(true);
  }, 60_000);

  test('a publisher killed while it holds the folder leaves no half document, and publishing again works', async () => {
    const target = join(base, 'killed');
    await publishPlugin(target, await plugin('killed-first', { description: 'published before' }));
    const before = await readFile(join(target, 'killed-first'), 'utf8');
    const dir = await plugin('killed-big', { description: 'a big plugin' });
    // Random bytes do not compress: hashing and writing them keeps the folder locked long enough to be caught.
    await writeFile(join(dir, 'data.bin'), randomBytes(24 * 1024 * 1024));
    const lock = join(target, '-', '.publish.lock');
    let caught = false;
    for (let attempt = 0; attempt < 3 && !caught; attempt++) {
      const child = spawn(process.execPath, [BIN, 'registry', 'publish', dir, '--to', target], { env: cleanEnv({}, { ci: true }), stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      let running = true;
      void exited.then(() => (running = false));
      while (running && !caught) {
        if (await stat(lock).then(() => true, () => false)) {
          child.kill('SIGKILL');
          caught = true;
        } else await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await exited;
      if (!caught) await rm(join(target, 'killed-big'), { force: true });
    }
    expect(caught, 'the publisher was killed while it held the lock').toBe(true);
    // Every document there is whole: the old packument unchanged, the new one absent or complete, the index valid.
    expect(await readFile(join(target, 'killed-first'), 'utf8')).toBe(before);
    const partial = await readFile(join(target, 'killed-big'), 'utf8').catch(() => undefined);
    if (partial !== undefined) packumentSchema.parse(JSON.parse(partial));
    searchResponseSchema.parse(JSON.parse(await readFile(join(target, '-', 'v1', 'search'), 'utf8')));
    // The dead publisher's lock is taken over, and the plugin lands.
    const again = await plinth(['registry', 'publish', dir, '--to', target, '--json']);
    expectExit(again, 0);
    const index = searchResponseSchema.parse(JSON.parse(await readFile(join(target, '-', 'v1', 'search'), 'utf8')));
    expect(index.objects.map((o) => o.package.name)).toEqual(['killed-big', 'killed-first']);
    const served = await serveRegistry(target);
    try {
      const doc = packumentSchema.parse(await (await fetch(packumentUrl(served.url, 'killed-big'))).json());
      const bytes = Buffer.from(await (await fetch(doc.versions['1.0.0']!.dist.tarball)).arrayBuffer());
      expect(ssri.checkData(bytes, doc.versions['1.0.0']!.dist.integrity)).toBeTruthy();
    } finally {
      await served.close();
    }
  }, 180_000);

  test('mistakes are usage errors with codes', async () => {
    const noTarget = await plinth(['registry', 'publish', base, '--json']);
    expectExit(noTarget, 2);
    expect(json<{ error: { code: string } }>(noTarget).error.code).toBe('PLN_E_CLI_USAGE');
    const notPlugin = await plinth(['registry', 'pack', base, '--json']);
    expectExit(notPlugin, 1);
    expect(json<{ error: { code: string } }>(notPlugin).error.code).toBe('PLN_E_REGISTRY_PACK_MANIFEST');
    const badPort = await plinth(['registry', 'serve', base, '--port', 'eighty', '--json']);
    expectExit(badPort, 2);
    const help = await plinth(['registry', '--help']);
    expectExit(help, 0);
    expect(help.stdout).toContain('plinth registry pack <dir>');
  }, 60_000);
});

describe('the embedded default registry', () => {
  beforeAll(() => {
    ensureBuilt();
    // A dist/ built before the embedded registry existed: build again (it is part of `npm run build`).
    if (!existsSync(defaultRegistryFolder())) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  }, 300_000);

  test('is built from the examples and the transports, the same bytes every time', async () => {
    const a = join(base, 'default-a');
    const b = join(base, 'default-b');
    const results = await buildDefaultRegistry(ROOT, a);
    await buildDefaultRegistry(ROOT, b);
    expect(results.map((r) => r.name)).toEqual(['hello-guard', 'hello-command', 'transport-stdio', 'transport-http', 'transport-sse']);
    const listing = (folder: string) => execFileSync('sh', ['-c', 'find . -type f | sort | xargs sha256sum'], { cwd: folder }).toString();
    expect(listing(a)).toBe(listing(b));
    // Building again replaces the folder in one step, leaving nothing beside it.
    await buildDefaultRegistry(ROOT, a);
    expect((await readdir(base)).filter((name) => name.startsWith('default-a'))).toEqual(['default-a']);

    // `npm run build` made it where the sdk says, and it serves.
    expect(defaultRegistryFolder()).toBe(join(ROOT, 'dist', 'registry', 'default'));
    const embedded = await serveRegistry(defaultRegistryFolder());
    try {
      const found = searchResponseSchema.parse(await (await fetch(new URL('-/v1/search?text=example', embedded.url))).json());
      expect(found.objects.map((o) => o.package.name).sort()).toEqual(['hello-command', 'hello-guard']);
      const transport = packumentSchema.parse(await (await fetch(packumentUrl(embedded.url, 'transport-stdio'))).json());
      expect(transport.versions['1.0.0']).toMatchObject({ provides: ['transport:stdio'], dependencies: { launcher: '^1.0.0' } });
    } finally {
      await embedded.close();
    }
  }, 60_000);

  test('its example plugins work from their tarballs: a command, and a hook once approved', async () => {
    const unpacked = join(base, 'unpacked');
    for (const name of ['hello-command', 'hello-guard']) {
      const dir = join(unpacked, name);
      await mkdir(dir, { recursive: true });
      execFileSync('tar', ['-xzf', join(defaultRegistryFolder(), '-', `${name}-1.0.0.tgz`), '--strip-components=1', '-C', dir]);
    }
    const home = join(base, 'example-home');
    await mkdir(home, { recursive: true });
    const dirs = ['--home', home, '--workspace', base, '--plugin-dir', unpacked];
    const hello = await plinth([...dirs, 'hello', 'Ada']);
    expectExit(hello, 0);
    expect(hello.stdout.trim()).toBe('Hello, Ada!');

    expectExit(await plinth([...dirs, 'hooks', 'trust', 'hello-guard/no-rm']), 0);
    const blocked = await plinth([...dirs, 'hooks', 'run', 'before_tool', '--context', '{"tool":"rm"}', '--json']);
    expectExit(blocked, 5);
    expect(JSON.stringify(json(blocked))).toContain('hello-guard: the rm tool is not allowed');
    const allowed = await plinth([...dirs, 'hooks', 'run', 'before_tool', '--context', '{"tool":"ls"}', '--json']);
    expectExit(allowed, 0);
  }, 120_000);
});
