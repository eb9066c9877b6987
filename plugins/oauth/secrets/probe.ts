/**
 * The keychain probe: stores, reads back and deletes a random value with the
 * keychain module in a child process, so that the many ways a headless
 * keychain fails (no D-Bus, no provider, a locked collection answering null, a
 * hang, a segfault) are found there and never in plinth. Every outcome becomes
 * a verdict with a reason a person can act on; the probe never throws.
 */
import { tmpdir } from 'node:os';
import { describeError } from 'plinth/sdk';
import type { Launcher } from 'plinth/sdk';
import { z } from 'zod';
import type { KeychainAvailability } from 'plinth/sdk';
import { KEYCHAIN_SERVICE, type KeychainModuleLocation } from './keychain.js';

/**
 * Run with `node --input-type=module -e`: the build compiles only .ts, so the
 * child's code travels as a string. argv: the module's URL, the service name.
 * Prints one JSON line, then exits at once (a keychain library may hold the
 * event loop open with a D-Bus connection).
 */
export const PROBE_SCRIPT = `
import { randomBytes } from 'node:crypto';
const [url, service] = process.argv.slice(1);
const said = (error) => String(error instanceof Error ? error.message : error).split('\\n')[0].slice(0, 300);
const finish = (result) => process.stdout.write(JSON.stringify(result) + '\\n', () => process.exit(0));
async function probe() {
  let loaded;
  try {
    loaded = await import(url);
  } catch (error) {
    return { ok: false, reason: 'the keychain module could not be loaded: ' + said(error) };
  }
  const fits = (m) => m && ['getPassword', 'setPassword', 'deletePassword'].every((name) => typeof m[name] === 'function');
  const api = [loaded, loaded && loaded.default].find(fits);
  if (!api) return { ok: false, reason: 'the keychain module does not export getPassword, setPassword and deletePassword' };
  const account = 'plinth-probe-' + randomBytes(8).toString('hex');
  const value = randomBytes(24).toString('base64');
  let step = 'setPassword';
  try {
    await api.setPassword(service, account, value);
    step = 'getPassword';
    const read = await api.getPassword(service, account);
    if (read === null || read === undefined) return { ok: false, reason: 'the keychain returned nothing for a value it had just stored (a locked keychain?)' };
    if (read !== value) return { ok: false, reason: 'the keychain returned another value than the one it had just stored' };
    step = 'deletePassword';
    await api.deletePassword(service, account);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: 'the probe\\'s ' + step + ' threw: ' + said(error) };
  } finally {
    if (step === 'getPassword') await Promise.resolve().then(() => api.deletePassword(service, account)).catch(() => {});
  }
}
probe().then(finish, (error) => finish({ ok: false, reason: 'the probe failed: ' + said(error) }));
`;

const resultSchema = z.union([z.object({ ok: z.literal(true) }), z.object({ ok: z.literal(false), reason: z.string().min(1) })]);

/** Output beyond this is a module talking, not the probe: it is cut off. */
const OUTPUT_LIMIT = 64 * 1024;

export interface ProbeOptions {
  /** The child is killed (with its process group) after this long. */
  readonly timeoutMs: number;
  /** The `launcher` service, which runs the probe. */
  readonly launcher: () => Promise<Launcher>;
}

/**
 * The variables a keychain library needs on top of the launcher's allowlist
 * (the session basics): D-Bus, the display, XDG folders, Windows' and macOS's
 * own, and `PLINTH_KEYCHAIN_*` for the keychain module's own configuration.
 */
const KEYCHAIN_ENV = ['PLINTH_KEYCHAIN_*', 'LANGUAGE', 'DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'WAYLAND_DISPLAY', 'XDG_*', 'SystemRoot', 'APPDATA', 'LOCALAPPDATA', 'USERPROFILE', 'USERNAME', '__CF_USER_TEXT_ENCODING'];

/** Probes the module at `location` in a child process. Never throws. */
export async function probeKeychain(location: Extract<KeychainModuleLocation, { found: true }>, options: ProbeOptions): Promise<KeychainAvailability> {
  try {
    return await run(await options.launcher(), location.url, options.timeoutMs);
  } catch (error) {
    return { available: false, reason: `the probe failed: ${describeError(error)}` };
  }
}

async function run(launcher: Launcher, url: string, timeoutMs: number): Promise<KeychainAvailability> {
  const result = await launcher.run({
    owner: 'oauth',
    purpose: 'keychain probe',
    program: process.execPath,
    args: ['--input-type=module', '-e', PROBE_SCRIPT, url, KEYCHAIN_SERVICE],
    // The script itself is no news in a trace.
    secretArgs: true,
    // A crashing library may dump core into the working directory: keep it out of the user's project.
    cwd: tmpdir(),
    passEnv: KEYCHAIN_ENV,
    timeoutMs,
    maxOutputBytes: OUTPUT_LIMIT,
  });
  if (result.timedOut) return { available: false, reason: `the probe timed out after ${timeoutMs} ms` };
  if (result.spawnError !== undefined) return { available: false, reason: `the probe could not start: ${result.spawnError}` };
  const stdout = result.stdout.toString('utf8');
  const stderr = result.stderr.toString('utf8');
  if (result.tooLarge !== undefined) return { available: false, reason: `the probe wrote more than ${OUTPUT_LIMIT / 1024} KiB to ${result.tooLarge} (the keychain module talking?)` };
  if (result.signal) return { available: false, reason: `the probe crashed (${result.signal})` };
  const verdict = lastResult(stdout);
  if (verdict) return verdict.ok ? { available: true } : { available: false, reason: verdict.reason };
  if (result.exitCode !== 0) {
    const line = errorLine(stderr);
    return { available: false, reason: `the probe exited with code ${String(result.exitCode)}${line ? `: ${line}` : ''}` };
  }
  const printed = stdout.trim();
  return { available: false, reason: printed ? `the probe printed something unexpected: ${JSON.stringify(printed.slice(0, 80))}` : 'the probe printed no result' };
}

/** The last line that is a probe result: a module may print lines of its own before it. */
function lastResult(stdout: string): z.infer<typeof resultSchema> | undefined {
  for (const line of stdout.split('\n').reverse()) {
    try {
      const parsed = resultSchema.safeParse(JSON.parse(line));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined;
}

/** The line of a child's stderr that says what went wrong, not the stack or node's version banner. */
function errorLine(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('at ') && !/^Node\.js v\d/.test(line) && line !== '^');
  return lines.at(-1)?.slice(0, 200);
}
