/**
 * The bubblewrap command line for one confined child. The sandbox's root is
 * an empty tmpfs: only what is bound is there. Bound read-only: the system
 * folders programs need to run (/usr and its symlinks, a short list of /etc),
 * the read grants, the plugin's folder and the program's own folder. Bound
 * writable: the write grants and the principal's private HOME; its TMPDIR is
 * a size-limited tmpfs of its own (limits.ts).
 * Never bound: the user's home, /tmp, /run, /var/run and $XDG_RUNTIME_DIR of
 * the host, so no host Unix socket is reachable by path (abstract sockets
 * belong to the host's network namespace, which the child leaves).
 *
 * Inside a writable grant, files that would let a child run code later as
 * the user stay read-only (shell rc files, .git, plinth's own settings and
 * trust stores): srt's protected-file idea, held against renames of their
 * parents and against creation where they do not exist (protectedLayout).
 * No variable's value is on bwrap's command line (bwrapEnvironment).
 */
import { accessSync, constants, existsSync, lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { type SandboxLimits, limitLines } from './limits.js';

/** Root-level folders a program needs (bound read-only, or recreated as the symlinks they are). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What of /etc a program needs: the loader's cache, names, time zone, TLS roots, `alternatives` (symlink targets). Not /etc/shadow, ssh keys or the like. */
const ETC_ENTRIES = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'nsswitch.conf', 'hosts', 'host.conf', 'resolv.conf', 'localtime', 'timezone', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'alternatives', 'mime.types', 'os-release', 'debian_version'];
/**
 * Names that stay read-only in a writable grant's folder, and in the
 * workspace's and the user's home when a write grant holds them: files that
 * would let a child run code later as the user. `.git` whole (config, hooks,
 * info/attributes, commondir: a confined child changes no repository's git
 * folder), or the `.git` file of a worktree and the folder it names.
 */
export const PROTECTED_NAMES = ['.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.zshenv', '.zlogin', '.gitconfig', '.gitmodules', '.git', '.ssh', '.npmrc', '.plinth', '.mcp.json', '.vscode', '.idea', '.claude'];
/** The protected names that are folders: a missing one is held by an empty folder, the others by an empty file. */
const PROTECTED_FOLDERS = new Set(['.git', '.ssh', '.plinth', '.vscode', '.idea', '.claude']);

/** Where the proxy's socket folder appears inside the sandbox. */
export const RUN_INSIDE = '/run/plinth-sandbox';

export interface BwrapPlan {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Real paths, read-only. */
  readonly read: readonly string[];
  /** Real paths, writable. */
  readonly write: readonly string[];
  /**
   * Folders the program also knows by another name, bound read-only at that
   * name too: an installed plugin is reached through its link
   * `plugins/<name>`, which a path in its arguments or settings may use.
   */
  readonly aliases?: ReadonlyArray<{ readonly path: string; readonly target: string }>;
  readonly privateHome: string;
  readonly privateTmp: string;
  /** Further paths that must stay read-only even under a write grant (plinth's user folder). */
  readonly protectedPaths: readonly string[];
  /** Further folders whose protected names are protected when a write grant holds them (the workspace, the user's home). */
  readonly protectedRoots?: readonly string[];
  /**
   * An empty folder and an empty file (host paths): bound read-only where a
   * protected name does not exist yet, so that the child cannot create it.
   * Without them a missing protected name is not held.
   */
  readonly placeholders?: { readonly dir: string; readonly file: string };
  /** Processes, file size, and the private TMPDIR's size (then a tmpfs of that size, not the host folder). */
  readonly limits?: SandboxLimits;
  /** The protected paths, as {@link protectedLayout} found them (found here when absent). */
  readonly layout?: ProtectedLayout;
  /** The host folder holding the proxy socket, bound at {@link RUN_INSIDE}; with `relayPort`, socat relays 127.0.0.1:port to it. */
  readonly runDir?: string;
  readonly relayPort?: number;
  /** The socat to run inside (real path). */
  readonly socat?: string;
  /** Start the program only once the relay listens (default); node children reach the socket directly and need not wait. */
  readonly waitForRelay?: boolean;
  /** The environment the child gets: handed to bwrap as its own environment ({@link bwrapEnvironment}), never on a command line. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * plinth's own variables inside, which hold no secret and which bwrap and the
 * host's C library do not read: they go to bwrap's environment as they are.
 */
const PLAIN_NAMES = new Set(['PATH', 'HOME', 'TMPDIR', 'HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'NODE_OPTIONS', 'PLINTH_SANDBOX_PROXY_SOCKET']);
/** Where a carried variable waits in bwrap's environment: `PLINTH_SANDBOX_ENV_<n>`. Names with this prefix are plinth's own. */
export const CARRIED_PREFIX = 'PLINTH_SANDBOX_ENV_';
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The environment bwrap itself is started with, and the variables the shell
 * inside restores. bwrap passes its environment on to the child (no
 * `--clearenv`, no `--setenv NAME VALUE`, whose value anyone could read in
 * /proc/<pid>/cmdline). But bwrap runs on the host: a granted `LD_PRELOAD`,
 * `GCONV_PATH` or `GLIBC_TUNABLES` would act on it there, outside the
 * sandbox. So every variable but plinth's own plain ones travels under a
 * neutral name (`PLINTH_SANDBOX_ENV_<n>`) and the shell inside gives it its
 * name back before it starts the program ({@link bwrapArgs}); only the names
 * are on its command line. A name a shell cannot hold is left out.
 */
export function bwrapEnvironment(env: Readonly<Record<string, string>>): { readonly env: Record<string, string>; readonly carried: readonly string[] } {
  const out: Record<string, string> = {};
  const carried: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (PLAIN_NAMES.has(name)) out[name] = value;
    else if (SHELL_NAME.test(name) && !name.startsWith(CARRIED_PREFIX)) {
      out[`${CARRIED_PREFIX}${carried.length}`] = value;
      carried.push(name);
    }
  }
  return { env: out, carried };
}

/** Whether `path` is `base` or inside it. */
export function isWithin(path: string, base: string): boolean {
  return path === base || path.startsWith(base.endsWith(sep) ? base : base + sep);
}

function systemBinds(): string[] {
  const out: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) out.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) out.push('--ro-bind', dir, dir);
  }
  for (const entry of ETC_ENTRIES) {
    const path = join('/etc', entry);
    if (existsSync(path)) out.push('--ro-bind', path, path);
  }
  return out;
}

/** Where a protected name is, and how it is held inside. */
export interface ProtectedLayout {
  /** Existing protected paths: each bound read-only over itself (a mount point: no rename, no removal, no write). */
  readonly existing: readonly string[];
  /**
   * Missing ones in a writable folder: an empty read-only placeholder is bound
   * there. bwrap makes the mount point, so the placeholder exists on the host
   * while the child runs; the sandbox removes it when the child has ended.
   */
  readonly missing: ReadonlyArray<{ readonly path: string; readonly dir: boolean }>;
  /**
   * Folders between a write grant and a protected path, each bound over itself:
   * a mount point cannot be renamed or removed (EBUSY), so no parent of a
   * protected path can be moved aside and replaced by one the child made.
   */
  readonly anchors: readonly string[];
}

/** The folder a worktree's `.git` file names (`gitdir: …`), when it exists. */
function gitdirOf(file: string): string | undefined {
  try {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(file, 'utf8'));
    if (match === null) return undefined;
    const path = resolve(dirname(file), match[1]!);
    return existsSync(path) ? realpathSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The protected paths under the write grants: each protected name in each
 * write grant's folder and in each of `roots` a write grant holds, plus
 * `extra` (plinth's user folder). `exclude`: the private HOME and TMPDIR,
 * which hold nothing the user runs.
 */
export function protectedLayout(write: readonly string[], roots: readonly string[], extra: readonly string[], exclude: readonly string[] = []): ProtectedLayout {
  const grants = write.filter((w) => existsSync(w) && !exclude.some((e) => isWithin(w, e)));
  const writable = (path: string): boolean => grants.some((w) => isWithin(path, w));
  const existing = new Set<string>();
  const missing = new Map<string, boolean>();
  const folders = [...new Set([...grants, ...roots.filter((root) => writable(root) && existsSync(root) && statSync(root).isDirectory())])];
  for (const folder of folders) {
    for (const name of PROTECTED_NAMES) {
      const path = join(folder, name);
      let stat;
      try {
        stat = lstatSync(path);
      } catch {
        // A folder the host cannot write to (a read-only mount) cannot get it from the child either.
        try {
          accessSync(folder, constants.W_OK);
          missing.set(path, PROTECTED_FOLDERS.has(name));
        } catch {
          /* not writable: nothing to hold */
        }
        continue;
      }
      // A symlink: held at what it names when that exists (as bwrap binds it); a dangling one is left alone.
      if (stat.isSymbolicLink() && !existsSync(path)) continue;
      existing.add(path);
      // A worktree's .git file names the git folder that holds its config and hooks.
      const gitdir = name === '.git' && stat.isFile() ? gitdirOf(path) : undefined;
      if (gitdir !== undefined && writable(gitdir)) existing.add(gitdir);
    }
  }
  for (const path of extra) if (writable(path) && existsSync(path)) existing.add(path);
  const anchors = new Set<string>();
  for (const path of [...existing, ...missing.keys()]) {
    const grant = grants.filter((w) => isWithin(path, w)).sort((a, b) => b.length - a.length)[0];
    if (grant === undefined) continue;
    for (let dir = dirname(path); dir !== grant && isWithin(dir, grant); dir = dirname(dir)) anchors.add(dir);
  }
  return { existing: [...existing], missing: [...missing].map(([path, dir]) => ({ path, dir })), anchors: [...anchors] };
}

/**
 * Every host path the child sees under its own name (as {@link bwrapArgs}
 * binds them): the system folders, the /etc entries, the grants, the private
 * HOME and TMPDIR, the program's folder and the aliases. What is not within
 * one of these does not exist inside.
 */
export function exposedPaths(plan: BwrapPlan): string[] {
  const etc = ETC_ENTRIES.map((entry) => join('/etc', entry));
  return [...SYSTEM_DIRS, ...etc, '/dev', '/proc', ...plan.read, ...plan.write, plan.privateHome, plan.privateTmp, dirname(plan.file), ...(plan.aliases ?? []).map((alias) => alias.path)];
}

/** The arguments after `bwrap` (the program and its arguments last). */
export function bwrapArgs(plan: BwrapPlan): string[] {
  // No --clearenv: bwrap is started with exactly the child's environment (bwrapEnvironment).
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  args.push(...systemBinds());
  args.push('--dev', '/dev', '--proc', '/proc');
  const binds: Array<{ path: string; writable: boolean }> = [];
  for (const path of plan.read) if (existsSync(path)) binds.push({ path, writable: false });
  // With limits, the private TMPDIR is a tmpfs of its own size (below), not the host folder.
  const tmpfs = plan.limits !== undefined;
  for (const path of [...plan.write, plan.privateHome, ...(tmpfs ? [] : [plan.privateTmp])]) if (existsSync(path)) binds.push({ path, writable: true });
  const programDir = dirname(plan.file);
  if (![...SYSTEM_DIRS, ...binds.map((b) => b.path)].some((base) => isWithin(plan.file, base))) binds.push({ path: programDir, writable: false });
  const layout = plan.layout ?? protectedLayout(plan.write, plan.protectedRoots ?? [], plan.protectedPaths, [plan.privateHome, plan.privateTmp]);
  // The parents of protected paths, bound over themselves in the same pass (a bind takes the host's folder, not what is mounted below it inside).
  for (const path of layout.anchors) if (!binds.some((b) => b.path === path)) binds.push({ path, writable: true });
  // Parents before children, so that a grant inside another is mounted over it.
  binds.sort((a, b) => a.path.split(sep).length - b.path.split(sep).length);
  for (const bind of binds) args.push(bind.writable ? '--bind' : '--ro-bind', bind.path, bind.path);
  const aliases = (plan.aliases ?? []).filter((alias) => existsSync(alias.target));
  for (const alias of aliases) args.push('--ro-bind', alias.target, alias.path);
  const protectedPaths = [...layout.existing].sort((a, b) => a.split(sep).length - b.split(sep).length);
  for (const path of protectedPaths) args.push('--ro-bind', path, path);
  if (plan.placeholders !== undefined) for (const { path, dir } of layout.missing) args.push('--ro-bind', dir ? plan.placeholders.dir : plan.placeholders.file, path);
  // The private HOME lives under plinth's user folder: a protected folder bound over it must not take it away.
  for (const own of [plan.privateHome, ...(tmpfs ? [] : [plan.privateTmp])]) if (protectedPaths.some((p) => isWithin(own, p)) && existsSync(own)) args.push('--bind', own, own);
  // Last, over whatever holds its path: what it holds stays in memory, up to its size, and goes with the sandbox.
  if (plan.limits !== undefined) args.push('--size', String(plan.limits.tmpBytes), '--tmpfs', plan.privateTmp);
  if (plan.runDir !== undefined) args.push('--ro-bind', plan.runDir, RUN_INSIDE);
  const visible = [...binds, ...aliases].some((b) => isWithin(plan.cwd, b.path));
  args.push('--chdir', visible ? plan.cwd : plan.privateHome);
  args.push('--');
  args.push('/bin/sh', '-c', insideScript(plan), plan.file, ...plan.args);
  return args;
}

/**
 * The shell that starts the program inside (with builtins only: no process of
 * its own): starts the relay where there is one, gives the carried variables
 * their names back, then `exec`s the program. It holds names, never values.
 */
function insideScript(plan: BwrapPlan): string {
  const { carried } = bwrapEnvironment(plan.env);
  const lines: string[] = plan.limits === undefined ? [] : limitLines(plan.limits);
  if (plan.relayPort !== undefined && plan.socat !== undefined) {
    // socat listens on the namespace's loopback and relays to the host proxy's socket. A program other
    // than node starts once it listens (read with shell builtins only: no process per look); node
    // reaches the socket directly through the preload, so it does not wait.
    const portHex = plan.relayPort.toString(16).toUpperCase().padStart(4, '0');
    lines.push(`${quote(plan.socat)} TCP-LISTEN:${plan.relayPort},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${RUN_INSIDE}/proxy.sock 2>/dev/null &`);
    if (plan.waitForRelay !== false)
      lines.push(
        'i=0',
        'while [ $i -lt 2000 ]; do',
        `  while read -r _ addr _ state _; do [ "$state" = 0A ] && [ "\${addr#*:}" = ${portHex} ] && break 2; done < /proc/net/tcp`,
        '  i=$((i+1))',
        'done',
      );
  }
  // After the relay: socat never sees them, and the loop's variables do not hide one of the same name.
  carried.forEach((name, n) => lines.push(`export ${name}="$${CARRIED_PREFIX}${n}"`));
  if (carried.length > 0) lines.push(`unset ${carried.map((_, n) => `${CARRIED_PREFIX}${n}`).join(' ')}`);
  lines.push('exec "$0" "$@"');
  return lines.join('\n');
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** NODE_OPTIONS from flags: a value with a space or quote is double-quoted, as Node parses it. */
export function nodeOptions(flags: readonly string[]): string {
  return flags
    .map((flag) => {
      if (!/[\s"\\]/.test(flag)) return flag;
      const eq = flag.indexOf('=');
      return `${flag.slice(0, eq + 1)}"${flag.slice(eq + 1).replace(/(["\\])/g, '\\$1')}"`;
    })
    .join(' ');
}

/** Whether a program is node (by its real path's name): it reaches the proxy through the preload, not the relay. */
export function isNodeProgram(file: string): boolean {
  return /^node(?:\d+)?$/.test(basename(file));
}
