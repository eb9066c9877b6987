/**
 * A real npm registry for the marketplace's tests: Verdaccio (a devDependency) started as a child
 * process on 127.0.0.1, with no uplink (nothing is proxied to the public registry), its storage in
 * a temporary folder, and one user whose token `npm publish` uses, as a plugin author publishes.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';

const VERDACCIO = join(ROOT, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
const run = promisify(execFile);

export interface Verdaccio {
  readonly url: string;
  /** The token of the user the registry was started with (for `npm publish`, and a registry's `token` setting). */
  readonly token: string;
  /** `npm publish` of a package folder, as its author runs it; the npm user config is this registry's. */
  publish(dir: string): Promise<void>;
  /** Runs npm against this registry (`npm search x`, `npm view x`), offline from every other registry. */
  npm(args: readonly string[], cwd: string): Promise<{ stdout: string; stderr: string }>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts Verdaccio in `base` (its config, storage and htpasswd live there). */
export async function startVerdaccio(base: string): Promise<Verdaccio> {
  const dir = join(base, `verdaccio-${Math.random().toString(36).slice(2, 8)}`);
  await mkdir(join(dir, 'storage'), { recursive: true });
  const config = join(dir, 'config.yaml');
  // No `uplinks`: a name the registry does not have is a 404, never a request to npmjs.org.
  await writeFile(
    config,
    [
      `storage: ${JSON.stringify(join(dir, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(dir, 'htpasswd'))}`,
      '    max_users: 10',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    unpublish: $authenticated',
      'log: { type: stdout, format: pretty, level: warn }',
      'web: { enable: false }',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [VERDACCIO, '--config', config, '--listen', `127.0.0.1:${port}`], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`verdaccio exited (${String(code)}): ${output}`))));
  exited.catch(() => undefined);

  // Ready when it answers; a user added through npm's own endpoint gives the token npm publishes with.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ok = await fetch(`${url}/-/ping`).then((r) => r.ok, () => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`verdaccio did not start on ${url}: ${output}`);
    }
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), exited]);
  }
  const user = await fetch(`${url}/-/user/org.couchdb.user:author`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'author', password: 'author-password', type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const { token } = (await user.json()) as { token?: string };
  if (!user.ok || !token) throw new Error(`verdaccio refused the test user: ${user.status}`);

  const npmrc = join(dir, '.npmrc');
  await writeFile(npmrc, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  const npmEnv = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    npm_config_userconfig: npmrc,
    npm_config_registry: `${url}/`,
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_loglevel: 'error',
  };
  const npm = async (args: readonly string[], cwd: string) => run('npm', [...args], { cwd, env: npmEnv, encoding: 'utf8' });
  return {
    url,
    token,
    npm,
    async publish(packageDir) {
      await npm(['publish', '--access', 'public'], packageDir);
    },
    async close() {
      if (child.exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 3_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
