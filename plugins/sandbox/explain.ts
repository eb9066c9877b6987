/**
 * Why a confined child that died early may have died: bubblewrap hides what
 * is not bound, so a script, a `node_modules` folder or a data file outside
 * the grants is simply not there, and the child fails with ENOENT or "Cannot
 * find module" — the true message, which does not say that the sandbox is the
 * cause. Given what the child wrote on stderr, this finds the paths it failed
 * on that do exist on the host but lie outside what its sandbox exposes, and
 * says which permission to declare and grant. Nothing recognised: undefined.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Principal } from 'plinth/sdk';
import { isWithin } from './bwrap.js';
import type { SandboxLimits } from './limits.js';
import { realPath } from './policy.js';

/** What the child's sandbox showed it, and where it started. */
export interface Exposure {
  /** Every path bound into the sandbox (real paths), read-only or writable. */
  readonly paths: readonly string[];
  /** The child's working folder (host path). */
  readonly cwd: string;
  /** For `${workspace}` and `${home}` in the suggestion. */
  readonly workspace: string;
  readonly userHome: string;
}

/** At most this many paths are named in one hint. */
const MAX_NAMED = 3;

/** A path the child said it could not find, and the file it was looked for from (a bare module name's importer). */
interface Sign {
  readonly target: string;
  readonly from?: string;
}

/** The signs of a missing file in what node, Python and the shells write. */
function signs(output: string): Sign[] {
  const found: Sign[] = [];
  const requireStack = /requireStack: \[\s*'([^']+)'/.exec(output)?.[1];
  for (const match of output.matchAll(/Cannot find (?:module|package) '([^']+)'(?: imported from (\S+))?/g)) {
    const from = match[2] ?? requireStack;
    found.push({ target: match[1]!, ...(from !== undefined && { from }) });
  }
  const absolute = [
    /ENOENT[^'\n]*'(\/[^']+)'/g, // node: ENOENT: no such file or directory, open '/x'
    /can't open file '(\/[^']+)'/g, // python: can't open file '/x': [Errno 2]
    /(\/[^\s:'"]+): (?:No such file or directory|not found)/g, // sh, bash, env
    /resource: '(\/[^']+)'/g, // node's permission model: ERR_ACCESS_DENIED
  ];
  for (const pattern of absolute) for (const match of output.matchAll(pattern)) found.push({ target: match[1]! });
  return found;
}

/** The package a bare specifier names: `a` of `a/b`, `@s/a` of `@s/a/b`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The host folder or file to expose for one sign, when it exists on the host and the sandbox hides it. */
function hiddenPath(sign: Sign, exposure: Exposure, exposed: (path: string) => boolean): string | undefined {
  const { target } = sign;
  const base = sign.from !== undefined && isAbsolute(sign.from) ? dirname(sign.from.replace(/^file:\/\//, '')) : exposure.cwd;
  if (isAbsolute(target) || target.startsWith('./') || target.startsWith('../')) {
    const path = resolve(base, target);
    if (!existsSync(path)) return undefined;
    const real = realPath(path);
    if (exposed(real)) return undefined;
    // A file: its folder is what a grant names (a script next to its own modules).
    return statSync(real).isDirectory() ? real : dirname(real);
  }
  if (target.startsWith('node:')) return undefined;
  // A bare name: the node_modules Node would find it in, walking up from the importer.
  const name = packageName(target);
  for (let dir = base; ; dir = dirname(dir)) {
    const modules = join(dir, 'node_modules');
    if (existsSync(join(modules, name))) {
      const real = realPath(modules);
      return exposed(realPath(join(modules, name))) ? undefined : real;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** `${workspace}/…` or `${home}/…` where a path is under one, as a grant is best written. */
function asDeclared(path: string, exposure: Exposure): string {
  for (const [placeholder, base] of [['${workspace}', exposure.workspace], ['${home}', exposure.userHome]] as const) {
    const real = existsSync(base) ? realPath(base) : base;
    if (isWithin(path, real)) {
      const rest = relative(real, path);
      return rest === '' ? placeholder : `${placeholder}/${rest.split(sep).join('/')}`;
    }
  }
  return path;
}

/** The hint for what `output` (the child's stderr) shows, or undefined. */
export function explainHidden(output: string, exposure: Exposure, principal: Principal): string | undefined {
  const exposed = (path: string): boolean => exposure.paths.some((base) => isWithin(path, base));
  const hidden: string[] = [];
  for (const sign of signs(output)) {
    let path: string | undefined;
    try {
      path = hiddenPath(sign, exposure, exposed);
    } catch {
      continue; // a path that vanished meanwhile, or cannot be looked at: no hint from it
    }
    if (path !== undefined && !hidden.includes(path)) hidden.push(path);
    if (hidden.length === MAX_NAMED) break;
  }
  if (hidden.length === 0) return undefined;
  const declared = hidden.map((path) => asDeclared(path, exposure));
  const list = declared.map((path) => JSON.stringify(path)).join(', ');
  const where = `add ${list} to "permissions": { "filesystem": { "read": […] } } of its ${principal.id.startsWith('settings:') ? 'definition' : 'manifest.json'}`;
  // The user's own settings are confined with what they declare; every other principal with what was granted.
  const grant =
    principal.id === 'settings:user'
      ? ''
      : `, then grant it: plinth perms grant ${principal.id}${principal.id.startsWith('settings:') ? declared.map((path) => ` 'filesystem.read ${path}'`).join('') : ''}`;
  return `${principal.label} runs in the sandbox, which does not expose ${hidden.join(', ')}, and it failed looking there. To let it read ${hidden.length === 1 ? 'that' : 'those'}, ${where}${grant}`;
}

/**
 * When the proxy refused a connection of a confined child that then failed:
 * the sandbox is the cause (a program reports a refused proxy in its own words,
 * npm's `E403 … forbidden by your security policy`), so say so, as
 * `PLN_E_SANDBOX_NETWORK_REFUSED`, with the permission and the grant that allow
 * it. `targets`: the `host:port` refused, oldest first.
 */
export function explainRefused(targets: readonly string[], principal: Principal): string | undefined {
  if (targets.length === 0) return undefined;
  const named = targets.slice(0, MAX_NAMED);
  const list = named.map((target) => JSON.stringify(target)).join(', ');
  const where = `add ${list} to "permissions": { "network": { "allow": […] } } of its ${principal.id.startsWith('settings:') ? 'definition' : 'manifest.json'}`;
  const grant =
    principal.id === 'settings:user'
      ? ''
      : `, then grant it: plinth perms grant ${principal.id}${principal.id.startsWith('settings:') ? named.map((target) => ` 'network ${target}'`).join('') : ''}`;
  return `PLN_E_SANDBOX_NETWORK_REFUSED: plinth's sandbox refused ${principal.label} a connection to ${named.join(', ')}${targets.length > named.length ? ' and more' : ''} (not in the network permissions granted to it; see \`plinth perms audit ${principal.id}\`). To allow ${named.length === 1 ? 'it' : 'them'}, ${where}${grant}`;
}

const MB = 1024 * 1024;

/**
 * When a confined child ran into one of its limits (limits.ts): which one,
 * and the setting that raises it, as `PLN_E_SANDBOX_LIMIT`. Recognised from
 * the pids cgroup's count of refused forks, and from what the child wrote: a
 * refused fork (EAGAIN), a file past RLIMIT_FSIZE (SIGXFSZ, EFBIG), a full
 * TMPDIR (ENOSPC). Nothing recognised: undefined.
 */
export function explainLimits(output: string, state: { readonly limits: SandboxLimits; readonly processesHit: boolean; readonly tmp: string }, principal: Principal): string | undefined {
  const { limits } = state;
  const hits: string[] = [];
  if (state.processesHit || /fork: Resource temporarily unavailable|Cannot fork|can't fork|spawn\b.*EAGAIN|EAGAIN.*\bspawn|fork failed/i.test(output))
    hits.push(`its limit of ${limits.maxProcesses} processes at once (setting sandbox.maxProcesses)`);
  if (/File size limit exceeded|EFBIG|File too large/.test(output)) hits.push(`its limit of ${Math.round(limits.maxFileBytes / MB)} MB per file (setting sandbox.maxFileSizeMB)`);
  if (/No space left on device|ENOSPC/.test(output) && output.includes(state.tmp)) hits.push(`its TMPDIR's size, ${Math.round(limits.tmpBytes / MB)} MB (setting sandbox.tmpSizeMB)`);
  else if (/No space left on device|ENOSPC/.test(output)) hits.push(`its TMPDIR's size if it wrote there, ${Math.round(limits.tmpBytes / MB)} MB (setting sandbox.tmpSizeMB), or a full disk`);
  if (hits.length === 0) return undefined;
  return `PLN_E_SANDBOX_LIMIT: ${principal.label} ran into ${hits.join(' and ')}. To give it more, raise the setting in your user settings ("sandbox": { … })`;
}
