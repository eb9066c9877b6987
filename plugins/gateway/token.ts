/**
 * The bearer token of `plinth serve --http`: from the `token` setting (a
 * value, or a `${env:NAME}` reference), else the one stored 0600 in
 * `$PLINTH_HOME/gateway/token`, else a new one generated, stored and shown once.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlinthError, writeFileAtomic } from 'plinth/sdk';
import type { GatewayToken } from 'plinth/sdk';

const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;
const MIN_LENGTH = 16;

/** The token and where it came from. */
export async function gatewayToken(setting: string | undefined, home: string, env: NodeJS.ProcessEnv = process.env): Promise<{ value: string; info: GatewayToken }> {
  if (setting !== undefined && setting !== '') {
    const reference = ENV_REFERENCE.exec(setting);
    const value = reference ? env[reference[1]!] : setting;
    const from = reference ? `environment variable ${reference[1]} (setting plugins.gateway.settings.token)` : 'setting plugins.gateway.settings.token';
    if (value === undefined || value === '') {
      throw new PlinthError('PLN_E_GATEWAY_TOKEN', `the gateway token is ${from}, which is not set`, {
        plugin: 'gateway',
        hint: `export ${reference?.[1] ?? 'the variable'} with a long random value, or remove the token setting to let plinth generate one`,
      });
    }
    if (value.length < MIN_LENGTH) {
      throw new PlinthError('PLN_E_GATEWAY_TOKEN', `the gateway token from ${from} has ${value.length} characters; it needs at least ${MIN_LENGTH}`, {
        plugin: 'gateway',
        hint: 'use a long random value, e.g. `openssl rand -base64 32`',
      });
    }
    return { value, info: { from } };
  }
  const folder = join(home, 'gateway');
  const file = join(folder, 'token');
  const stored = await readFile(file, 'utf8').then((text) => text.trim(), () => undefined);
  if (stored !== undefined && stored.length >= MIN_LENGTH) return { value: stored, info: { from: file } };
  const value = randomBytes(32).toString('base64url');
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${value}\n`, { mode: 0o600 });
  return { value, info: { from: file, generated: value } };
}

/** Whether an `Authorization` header carries the token (compared in constant time). */
export function authorized(header: string | undefined, token: string): boolean {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
