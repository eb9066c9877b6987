/**
 * Private sources: `hostTokens` (a token per host, `${env:NAME}`) sent as `Authorization: Bearer`
 * to that host only, for a marketplace.json URL, an archive and a git repository over http, never
 * to another origin (two real HTTP servers on 127.0.0.1: the private one redirects to the other),
 * and never in any output, the lock file or the list of marketplaces.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Result, type Sandbox, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';
import { type Seen, recordingServer, writePlugin } from './support/market.js';

const TOKEN = 'tok-7c1e-private-never-shown';
let base: string;
let privateHost: { url: string; seen: Seen[]; close: () => Promise<void> };
let otherHost: { url: string; seen: Seen[]; close: () => Promise<void> };
let home: Sandbox;
const outputs: Result[] = [];

async function tarball(name: string, version: string): Promise<{ bytes: Buffer; sha: string }> {
  const dir = await writePlugin(join(base, 'src'), { name, version, description: `${name}, privately published` });
  const file = join(base, `${name}.tgz`);
  await createTar({ gzip: true, file, cwd: dir, prefix: 'package', portable: true }, ['manifest.json', 'index.ts']);
  const bytes = await readFile(file);
  return { bytes, sha: createHash('sha256').update(bytes).digest('hex') };
}

async function plinth(args: string[], env: Record<string, string> = { MARKET_TOKEN: TOKEN }): Promise<Result> {
  const result = await run(home, args, env);
  outputs.push(result);
  return result;
}

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-host-tokens-'));
  const kept = await tarball('kept-private', '1.0.0');
  const moved = await tarball('moved-away', '1.0.0');
  otherHost = await recordingServer({
    answer: (req, res) => {
      if (req.url === '/moved-away.tgz') res.writeHead(200, { 'content-type': 'application/gzip' }).end(moved.bytes);
      else res.writeHead(404).end();
      return true;
    },
  });
  privateHost = await recordingServer({
    answer: (req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end(), true;
      if (req.url === '/marketplace.json') {
        const catalogue = {
          name: 'private-tools',
          owner: { name: 'Team' },
          plugins: [
            { name: 'kept-private', source: { source: 'archive', url: `${privateHost.url}kept-private.tgz`, sha256: kept.sha } },
            { name: 'moved-away', source: { source: 'archive', url: `${privateHost.url}moved-away.tgz`, sha256: moved.sha } },
          ],
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(catalogue));
      } else if (req.url === '/kept-private.tgz') res.writeHead(200, { 'content-type': 'application/gzip' }).end(kept.bytes);
      else if (req.url === '/moved-away.tgz') res.writeHead(302, { location: `${otherHost.url}moved-away.tgz` }).end();
      // A git repository over http that has moved to the other host: git must not follow it there.
      else if (req.url?.startsWith('/repo.git/')) res.writeHead(302, { location: `${otherHost.url}${req.url.slice(1)}` }).end();
      else res.writeHead(404).end();
      return true;
    },
  });
  home = await sandbox('plinth-host-tokens-');
  const host = new URL(privateHost.url).host;
  await home.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, marketplace: { settings: { hostTokens: [{ host, token: '${env:MARKET_TOKEN}' }] } } } });
}, 120_000);

afterAll(async () => {
  await privateHost?.close();
  await otherHost?.close();
  await home?.remove();
  await rm(base, { recursive: true, force: true });
});

describe('hostTokens', () => {
  it('sends the token to its host for a marketplace.json and an archive, and not to the host an archive redirects to', async () => {
    // Without the variable set, the setting says which one is missing; nothing is fetched.
    const unset = await plinth(['ext', 'marketplace', 'add', `${privateHost.url}marketplace.json`], {});
    expectExit(unset, 1);
    expect(unset.stderr).toContain('names the environment variable MARKET_TOKEN, which is not set');
    expect(privateHost.seen).toEqual([]);

    expectExit(await plinth(['ext', 'marketplace', 'add', `${privateHost.url}marketplace.json`]), 0);
    expect(privateHost.seen.at(-1)).toMatchObject({ url: '/marketplace.json', authorization: `Bearer ${TOKEN}`, status: 200 });

    expectExit(await plinth(['ext', 'install', 'kept-private@private-tools', '--yes']), 0);
    expect(privateHost.seen.at(-1)).toMatchObject({ url: '/kept-private.tgz', authorization: `Bearer ${TOKEN}`, status: 200 });

    // Pinned by its SHA-256, the archive may come from elsewhere: without the token.
    expectExit(await plinth(['ext', 'install', 'moved-away@private-tools', '--yes']), 0);
    expect(privateHost.seen.at(-1)).toMatchObject({ url: '/moved-away.tgz', authorization: `Bearer ${TOKEN}`, status: 302 });
    expect(otherHost.seen).toEqual([expect.objectContaining({ url: '/moved-away.tgz', status: 200 })]);
    expect(otherHost.seen[0]!.authorization).toBeUndefined();
  }, 120_000);

  it('gives git the token for its host only: a redirect to another host is not followed', async () => {
    const before = otherHost.seen.length;
    const cloned = await plinth(['ext', 'install', `${privateHost.url}repo.git`, '--yes']);
    expectExit(cloned, 1);
    expect(cloned.stderr).toContain('PLN_E_MARKET_GIT');
    expect(privateHost.seen.at(-1)).toMatchObject({ authorization: `Bearer ${TOKEN}`, status: 302 });
    expect(privateHost.seen.at(-1)!.url).toMatch(/^\/repo\.git\/info\/refs/);
    expect(otherHost.seen.length).toBe(before);
  }, 120_000);

  it('never shows the token, nor keeps it in the lock file or the list of marketplaces', async () => {
    expect(outputs.length).toBeGreaterThan(3);
    for (const r of outputs) expect(r.stdout + r.stderr).not.toContain(TOKEN);
    const lock = await readFile(join(home.home, 'plugins.lock.json'), 'utf8');
    expect(lock).toContain('kept-private');
    expect(lock).not.toContain(TOKEN);
    expect(await readFile(join(home.home, 'marketplaces.json'), 'utf8')).not.toContain(TOKEN);
  });
});
