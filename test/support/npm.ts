/**
 * npm as a test runs it: offline for real. The registry is a closed port on
 * 127.0.0.1 and the cache an empty folder of the test's own, so a command
 * that needed anything from the network fails instead of fetching it.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, type Result, cleanEnv } from './cli.js';

/** The environment for npm (and what it runs) with every npm setting pointing into `base`. */
export async function offlineNpmEnv(base: string, extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  await mkdir(join(base, 'npm-cache'), { recursive: true });
  await writeFile(join(base, 'npmrc'), '');
  await writeFile(join(base, 'global-npmrc'), '');
  const env = cleanEnv({}, { ci: true });
  // What an outer `npm test` set for its own run (its prefix, its cache, its scripts' flags).
  for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
  return {
    ...env,
    npm_config_offline: 'true',
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_cache: join(base, 'npm-cache'),
    npm_config_userconfig: join(base, 'npmrc'),
    npm_config_globalconfig: join(base, 'global-npmrc'),
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    // Installing or linking this checkout (or a plugin that depends on it as a folder) would run its
    // `prepare`, rebuilding dist/ while other test files run the CLI from it; `npm test` built it already.
    // Explicit `npm test` / `npm run` still run their script.
    npm_config_ignore_scripts: 'true',
    ...extra,
  };
}

/** Runs `command` through the shell (as a person types it) in `cwd`. */
export function shell(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command], { cwd, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const failure = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
      const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');
      resolve({ code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0, stdout: strip(stdout), stderr: strip(stderr) });
    });
  });
}

/** `npm install -g .` from the repository into `<base>/prefix`, offline; returns the installed `plinth`. */
export async function installGlobally(base: string): Promise<{ prefix: string; bin: string; result: Result }> {
  const prefix = join(base, 'prefix');
  const result = await shell('npm install -g .', ROOT, await offlineNpmEnv(base, { npm_config_prefix: prefix }));
  return { prefix, bin: join(prefix, 'bin', 'plinth'), result };
}
