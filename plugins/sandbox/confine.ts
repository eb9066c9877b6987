/**
 * The `sandbox` service: for each launch that acts for a principal, ask the
 * grant policy, then confine: a bubblewrap command line (bwrap.ts) over the
 * granted paths, the environment reduced to the declared variables plus
 * PATH, a private HOME and TMPDIR, the network preload for node children,
 * and network only through the principal's proxy (network/proxy.ts). A
 * launch that cannot be decided or confined is refused (fail closed) and the
 * refusal written to the audit log.
 */
import { existsSync, mkdirSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ConfinedSpawn, type GrantPolicy, type Permissions, PlinthError, type Principal, type Sandbox, type SandboxAvailability, type SpawnPlan, describeError } from 'plinth/sdk';
import { plinthPackageFolder } from 'plinth/internal';
import { appendAudit } from './audit.js';
import { type BwrapPlan, RUN_INSIDE, bwrapArgs, bwrapEnvironment, exposedPaths, protectedLayout, isNodeProgram, nodeOptions } from './bwrap.js';
import { explainHidden, explainLimits, explainRefused } from './explain.js';
import { envGrantOf, formatItem } from './grants/items.js';
import { type SandboxLimits, limitsFrom, pidsGroup } from './limits.js';
import type { NetworkProxy } from './network/proxy.js';
import { expandFilesystem, hostRefusal, realPath } from './policy.js';
import { findProgram } from './probe.js';

/** Refusals that mean "no OS sandbox here": the probe's reason is added to their message. */
const NO_SANDBOX_CODES = new Set(['PLN_E_PERM_NO_SANDBOX', 'PLN_E_SANDBOX_UNAVAILABLE']);

/** The port the relay listens on inside every sandbox (each has a loopback of its own). */
export const RELAY_PORT = 3128;
/** What a confined child always gets on PATH when the request has none. */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
// Defined (true) by the build, which bundles this module into a chunk: the preload is not beside it there.
declare const PLINTH_BUNDLE: true | undefined;
/** The network preload (`node --require`): beside this module in the sources, at the same path under dist/ in the build (which copies it). */
export const PRELOAD =
  typeof PLINTH_BUNDLE === 'undefined'
    ? fileURLToPath(new URL('./network/preload.cjs', import.meta.url))
    : join(plinthPackageFolder(), 'dist', 'plugins', 'sandbox', 'network', 'preload.cjs');

/** plinth's own package folder (the one holding its package.json), from here or from dist/. */
function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'node_modules'))) return dir;
    dir = dirname(dir);
  }
  return undefined;
}
const PLINTH_ROOT = packageRoot();
/**
 * What a builtin plugin's children read besides their folder: plinth's own
 * dependencies (its MCP servers load the SDK from there) and package.json
 * (Node reads it to know the module type). Plinth's code, not the user's data.
 */
const BUILTIN_READS = PLINTH_ROOT === undefined ? [] : [join(PLINTH_ROOT, 'node_modules'), join(PLINTH_ROOT, 'package.json')];

export interface SandboxOptions {
  /** `PLINTH_HOME`: audit log, private homes. */
  readonly home: string;
  readonly workspace: string;
  /** The user's own home folder (`${home}`). */
  readonly userHome: string;
  readonly policy: GrantPolicy;
  /** Whether bubblewrap is usable (probe.ts), asked once. */
  readonly probe: () => Promise<SandboxAvailability>;
  /** Where per-principal sockets and temporary folders go (default: the OS temp folder). */
  readonly runtimeRoot?: string;
  /** Processes, file size and TMPDIR size per confined child (default: limits.ts's DEFAULT_LIMITS). */
  readonly limits?: SandboxLimits;
  /** Where a launch that loses what its definition asked for (an undeclared env variable) is said, once per principal and name. */
  readonly log?: { warn(message: string): void };
}

/** A principal's proxy, the network grant it checks (replaced at every launch), and the last refusals it made. */
interface ProxyEntry {
  proxy: Promise<NetworkProxy>;
  network: Permissions['network'];
  /** The last {@link MAX_REFUSALS_KEPT} refusals, numbered from 1 in order (`count`: the last number given). */
  readonly refused: Array<{ readonly n: number; readonly target: string; readonly reason: string }>;
  count: number;
}
const MAX_REFUSALS_KEPT = 20;

export interface SandboxImpl extends Sandbox {
  /** Closes every proxy. */
  close(): Promise<void>;
}

/**
 * The name of a principal's private folders (HOME, TMPDIR, the proxy's run
 * folder): readable, and unique per `PLINTH_HOME`, workspace, principal and
 * the principal's real folder (an installed plugin's version folder), so that
 * no two repositories, no two plinth homes and no two versions of a
 * downloaded plugin ever share one: what one of them leaves there (a `.pth`,
 * an rc file, a socket) never runs for another.
 */
export function privateFolderName(home: string, workspace: string, principal: Pick<Principal, 'id' | 'dir'>): string {
  const dir = principal.dir === undefined ? '' : realPath(principal.dir);
  const key = ['plinth-private/2', realPath(home), realPath(workspace), principal.id, dir].join('\0');
  const readable = `${principal.id.replace(/[^a-zA-Z0-9._-]+/g, '_').slice(0, 24)}-${basename(realPath(workspace)).replace(/[^a-zA-Z0-9._-]+/g, '_').slice(0, 16)}`;
  return `${readable}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** A stable code for a launch refused because the sandbox itself could not be set up. */
function setupError(principal: Principal, what: string, error: unknown): PlinthError {
  return new PlinthError('PLN_E_SANDBOX_SETUP', `${principal.label} was not started: its sandbox could not be set up (${what}: ${describeError(error)})`, {
    plugin: principal.id,
    hint: 'check `plinth perms status`; the launch was refused rather than run unconfined',
    cause: error,
  });
}

export function createSandbox(options: SandboxOptions): SandboxImpl {
  const runtimeRoot = options.runtimeRoot ?? join(tmpdir(), `plinth-sandbox-${process.getuid?.() ?? 'user'}`);
  let availability: Promise<SandboxAvailability> | undefined;
  const available = (): Promise<SandboxAvailability> => (availability ??= options.probe());
  /** Per run folder (one per principal, workspace and version): its proxy, and the network grant it checks (replaced at every launch). */
  const proxies = new Map<string, ProxyEntry>();
  const socat = findProgram('socat', undefined, process.env.PATH ?? DEFAULT_PATH);
  /** `<principal>\0<name>` of the variables already said to be left out. */
  const leftOutSaid = new Set<string>();
  /** Placeholders bound where a protected name did not exist, and how many running children hold each. */
  const held = new Map<string, number>();

  /** The empty folder and file bound read-only where a protected name does not exist yet. */
  function placeholders(): { dir: string; file: string } {
    const dir = join(runtimeRoot, 'placeholder');
    const file = join(runtimeRoot, 'placeholder-file');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!existsSync(file)) writeFileSync(file, '', { mode: 0o400 });
    return { dir, file };
  }

  /** When no running child holds it any more, removes a placeholder bwrap made on the host, if it is still empty. */
  function letGo(paths: readonly string[]): void {
    for (const path of paths) {
      const count = (held.get(path) ?? 1) - 1;
      if (count > 0) {
        held.set(path, count);
        continue;
      }
      held.delete(path);
      try {
        const stat = statSync(path);
        if (stat.isDirectory()) rmdirSync(path);
        else if (stat.isFile() && stat.size === 0) unlinkSync(path);
      } catch {
        /* gone already, or no longer empty: someone else's now */
      }
    }
  }

  const audit = (principal: Principal, permission: 'launch' | 'network' | 'env', target: string, reason: string): Promise<void> =>
    appendAudit(options.home, { plugin: principal.id, permission, target, reason });

  function proxyFor(principal: Principal, network: Permissions['network'], runDir: string): ProxyEntry {
    // One proxy per run folder: its socket lives there, and the folder is per principal, workspace and version.
    const known = proxies.get(runDir);
    if (known !== undefined) {
      known.network = network;
      return known;
    }
    const entry: ProxyEntry = { network, proxy: undefined as unknown as Promise<NetworkProxy>, refused: [], count: 0 };
    // Loaded with the first confined child that may use the network: node:http, node:net and node:dns are no part of a start.
    entry.proxy = import('./network/proxy.js').then(({ startProxy }) => startProxy({
      socketPath: join(runDir, 'proxy.sock'),
      refusal: (host, port) => hostRefusal(entry.network, host, port),
      onRefused: (target, reason) => {
        // Kept (the last few) for explain(): a child that died after a refusal is told the sandbox refused it.
        entry.refused.push({ n: ++entry.count, target, reason });
        if (entry.refused.length > MAX_REFUSALS_KEPT) entry.refused.shift();
        void audit(principal, 'network', target, reason);
      },
    }));
    proxies.set(runDir, entry);
    entry.proxy.catch(() => proxies.delete(runDir));
    return entry;
  }

  async function refuse(principal: Principal, plan: SpawnPlan, error: PlinthError): Promise<never> {
    await audit(principal, 'launch', plan.file, error.message);
    throw error;
  }

  return {
    availability: available,

    async confine(plan: SpawnPlan, principal: Principal): Promise<ConfinedSpawn> {
      const os = await available();
      let decision;
      try {
        decision = await options.policy.decide(principal, { osSandbox: os.available });
      } catch (error) {
        return refuse(principal, plan, new PlinthError('PLN_E_SANDBOX_UNDECIDED', `${principal.label} was not started: its permissions could not be decided (${describeError(error)})`, { plugin: principal.id, hint: 'check `plinth perms status`', cause: error }));
      }
      if (decision.mode === 'refused') {
        // The policy knows only that there is no OS sandbox; the probe knows why.
        const error = !os.available && os.reason !== undefined && NO_SANDBOX_CODES.has(decision.error.code) ? withReason(decision.error, os.reason) : decision.error;
        return refuse(principal, plan, error);
      }

      // Open: exactly as without the sandbox (the user allowed exactly that); nothing below applies.
      if (decision.mode === 'open') return { mode: 'open', file: plan.file, args: plan.args, argv0: plan.argv0, cwd: plan.cwd, env: plan.env, release: () => {} };
      const name = privateFolderName(options.home, options.workspace, principal);
      const folder = join(runtimeRoot, name);
      const privateHome = join(options.home, 'sandbox', 'homes', name);
      const privateTmp = join(folder, 'tmp');
      const runDir = join(folder, 'run');
      try {
        for (const dir of [privateHome, privateTmp, runDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });
      } catch (error) {
        return refuse(principal, plan, setupError(principal, 'its private folders', error));
      }
      const granted = decision.granted;
      const env = reducedEnvironment(plan, granted, realPath(privateHome), realPath(privateTmp));
      for (const name of plan.requestedEnv ?? []) {
        if (name in env) continue;
        void audit(principal, 'env', name, 'not declared in permissions.env: the variable was left out');
        // The user wrote it in "env" and approved it: a server or hook silently without its key is a puzzle, so say it (the value never).
        const key = `${principal.id}\0${name}`;
        if (options.log !== undefined && !leftOutSaid.has(key)) {
          leftOutSaid.add(key);
          // The grant names where the value comes from (`env API_TOKEN=\${env:OTHER}`): the item the grant policy will look for.
          const grant = principal.id.startsWith('settings:') ? `plinth perms grant ${principal.id} '${formatItem({ kind: 'env', value: envGrantOf(name, principal.envFrom !== undefined && Object.hasOwn(principal.envFrom, name) ? principal.envFrom[name] : undefined) })}'` : `plinth perms grant ${principal.id}`;
          options.log.warn(`PLN_E_SANDBOX_ENV_LEFT_OUT: ${principal.label} runs confined without the environment variable ${name}: its permissions do not declare it. To pass it, add "${name}" to "permissions": { "env": […] } of its definition, then grant it: ${grant}`);
        }
      }
      if (!os.available || os.program === undefined) {
        // A policy that asks for confinement where there is none: refused, never run open.
        return refuse(
          principal,
          plan,
          new PlinthError('PLN_E_SANDBOX_UNAVAILABLE', `${principal.label} was not started: it must run confined and no OS sandbox is available (${os.reason ?? 'unknown reason'})`, {
            plugin: principal.id,
            hint: 'install bubblewrap and socat (Debian/Ubuntu: apt-get install bubblewrap socat); `plinth perms status` says what plinth found',
          }),
        );
      }
      if (!existsSync(PRELOAD)) return refuse(principal, plan, setupError(principal, 'the network preload', new Error(`${PRELOAD} is missing (a build that did not copy it)`)));
      if (socat === undefined) return refuse(principal, plan, setupError(principal, 'socat', new Error('socat was not found on PATH (Debian/Ubuntu: apt-get install socat)')));

      const fs = expandFilesystem(granted.filesystem, { workspace: options.workspace, home: options.userHome, ...(principal.dir !== undefined && { pluginDir: principal.dir }), tmp: privateTmp });
      const pluginDir = principal.dir !== undefined && existsSync(principal.dir) ? realPath(principal.dir) : undefined;
      // An installed plugin runs from its version folder, reached through the link plugins/<name>: both names work inside.
      const aliases = pluginDir !== undefined && pluginDir !== resolve(principal.dir!) ? [{ path: resolve(principal.dir!), target: pluginDir }] : [];
      const cwd = existsSync(plan.cwd) ? realPath(plan.cwd) : plan.cwd;
      // The launcher's copy of the approved files (launch request `pinned`), which the child runs from: read-only inside.
      const approved = plan.approvedCopy !== undefined && existsSync(plan.approvedCopy) ? [realPath(plan.approvedCopy)] : [];
      const read = [...fs.read, ...(pluginDir !== undefined ? [pluginDir] : []), ...(principal.source === 'builtin' ? BUILTIN_READS.filter((p) => existsSync(p)).map(realPath) : []), ...approved, PRELOAD];
      const home = realPath(privateHome);
      const tmp = realPath(privateTmp);
      let proxy: ProxyEntry;
      try {
        proxy = proxyFor(principal, granted.network, runDir);
        await proxy.proxy;
      } catch (error) {
        return refuse(principal, plan, setupError(principal, 'its network proxy', error));
      }
      // node reaches the proxy's socket through the preload; the relay (socat, some 20 ms to start) is for
      // other programs, and for what a node child starts when it may reach a host at all.
      const node = isNodeProgram(plan.file);
      const relay = !node || granted.network.allow.length > 0;
      const proxyUrl = `http://127.0.0.1:${RELAY_PORT}`;
      const inside: Record<string, string> = {
        ...env,
        HTTP_PROXY: proxyUrl,
        HTTPS_PROXY: proxyUrl,
        http_proxy: proxyUrl,
        https_proxy: proxyUrl,
        ALL_PROXY: proxyUrl,
        PLINTH_SANDBOX_PROXY_SOCKET: `${RUN_INSIDE}/proxy.sock`,
        // Only the network preload. No Node permission flags: bubblewrap is the boundary, and Node's permission
        // model changes what a correct program sees (existsSync throws ERR_ACCESS_DENIED on Node 20, lstat of a
        // path outside the grants is ERR_ACCESS_DENIED where bubblewrap answers ENOENT, workers and shells refused).
        NODE_OPTIONS: nodeOptions([`--require=${PRELOAD}`]),
      };
      let marks;
      try {
        marks = placeholders();
      } catch (error) {
        return refuse(principal, plan, setupError(principal, 'its placeholders for protected files', error));
      }
      const protectedPaths = [realPath(options.home)];
      const protectedRoots = [options.workspace, options.userHome].map(realPath);
      const layout = protectedLayout(fs.write, protectedRoots, protectedPaths, [home, tmp]);
      const placed = layout.missing.map((m) => m.path);
      for (const path of placed) held.set(path, (held.get(path) ?? 0) + 1);
      const limits = options.limits ?? limitsFrom({});
      // A pids cgroup where one can be made (the process limit even for root); RLIMIT_NPROC inside besides (limits.ts).
      const group = pidsGroup(limits.maxProcesses);
      let processesHit = false;
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        letGo(placed);
        if (group === undefined) return;
        processesHit = group.hit();
        if (processesHit) void audit(principal, 'launch', plan.file, `reached the sandbox's limit of ${limits.maxProcesses} processes (sandbox.maxProcesses)`);
        group.remove();
      };
      const refusedBefore = proxy.count;
      const bwrapPlan: BwrapPlan = { file: plan.file, args: plan.args, cwd, read, aliases, write: fs.write, privateHome: home, privateTmp: tmp, protectedPaths, protectedRoots, placeholders: marks, layout, limits, runDir, ...(relay && { relayPort: RELAY_PORT, socat }), waitForRelay: !node, env: inside };
      const exposure = { paths: exposedPaths(bwrapPlan), cwd, workspace: options.workspace, userHome: options.userHome };
      // In a cgroup: a shell joins it, then becomes bwrap (no fork outside it, no race with bwrap's first clone).
      const wrapped = group === undefined ? { file: os.program, args: bwrapArgs(bwrapPlan), argv0: 'bwrap' } : { file: '/bin/sh', args: ['-c', 'echo $$ > "$1/cgroup.procs" || exit 126\nshift\nexec "$0" "$@"', os.program, group.dir, ...bwrapArgs(bwrapPlan)], argv0: 'sh' };
      return {
        mode: 'confined',
        ...wrapped,
        cwd: plan.cwd,
        // The child's environment is bwrap's own (never --setenv on its command line); see bwrapEnvironment.
        env: bwrapEnvironment(inside).env,
        release,
        explain: (output: string) => {
          // Paths in the approved copy stand for the originals they mirror (the copy's folder is the prefix).
          const shown = approved.length > 0 ? output.split(plan.approvedCopy!).join('') : output;
          // Connections the proxy refused since this child started (another child of the same principal may share it).
          const refused = [...new Set(proxy.refused.filter((r) => r.n > refusedBefore).map((r) => r.target))];
          const said = [explainRefused(refused, principal), explainLimits(shown, { limits, processesHit, tmp }, principal), explainHidden(shown, exposure, principal)].filter((line): line is string => line !== undefined);
          return said.length === 0 ? undefined : said.join('; ');
        },
      };
    },

    async close() {
      const all = [...proxies.values()];
      proxies.clear();
      await Promise.all(all.map((entry) => entry.proxy.then((p) => p.close()).catch(() => {})));
    },
  };
}

function withReason(error: PlinthError, reason: string): PlinthError {
  return new PlinthError(error.code, `${error.message} (${reason})`, { ...(error.plugin !== undefined && { plugin: error.plugin }), ...(error.hint !== undefined && { hint: error.hint }), details: { ...error.details, sandbox: reason } });
}

/** The declared variables (their values from the launch), plus PATH, HOME (private) and TMPDIR; plinth's own values (the request's ownEnv) stay. */
export function reducedEnvironment(plan: SpawnPlan, granted: Permissions, home: string, tmp: string): Record<string, string> {
  const env: Record<string, string> = {};
  const requested = new Set(plan.requestedEnv ?? []);
  const own = new Set(plan.ownEnv ?? []);
  for (const [name, value] of Object.entries(plan.env)) {
    // PLINTH_SANDBOX_* are the sandbox's own names inside (the proxy socket, the carried variables).
    if (name.startsWith('PLINTH_SANDBOX_')) continue;
    // plinth's own values (ownEnv) without a grant; a definition's variable only when granted, whatever its name (PLINTH_* included).
    if (granted.env.includes(name) || (own.has(name) && requested.has(name))) env[name] = value;
  }
  env.PATH = plan.env.PATH ?? DEFAULT_PATH;
  env.HOME = home;
  env.TMPDIR = tmp;
  return env;
}
