/**
 * Resource limits for confined children: processes, file size, and the size
 * of the private TMPDIR (a size-limited tmpfs, bwrap.ts). The process limit
 * is a pids cgroup where plinth can make one (cgroup v2 with `pids` delegated
 * to plinth's own cgroup, or a writable cgroup v1 `pids` hierarchy: as root,
 * or in a container), and RLIMIT_NPROC set inside the sandbox, which the
 * kernel counts per user namespace from Linux 5.14 on and never enforces for
 * root. The file size is RLIMIT_FSIZE, set inside.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';

/** The limits one confined child runs under. */
export interface SandboxLimits {
  /** Processes (and threads) at once in one sandbox. */
  readonly maxProcesses: number;
  /** Bytes one file may grow to (RLIMIT_FSIZE). */
  readonly maxFileBytes: number;
  /** Bytes the private TMPDIR (a tmpfs) holds. */
  readonly tmpBytes: number;
}

export const DEFAULT_LIMITS = { maxProcesses: 512, maxFileSizeMB: 1024, tmpSizeMB: 512 } as const;

const MB = 1024 * 1024;

/** The limits from the settings (MB as the settings say them). */
export function limitsFrom(settings: { maxProcesses?: number; maxFileSizeMB?: number; tmpSizeMB?: number }): SandboxLimits {
  return {
    maxProcesses: settings.maxProcesses ?? DEFAULT_LIMITS.maxProcesses,
    maxFileBytes: (settings.maxFileSizeMB ?? DEFAULT_LIMITS.maxFileSizeMB) * MB,
    tmpBytes: (settings.tmpSizeMB ?? DEFAULT_LIMITS.tmpSizeMB) * MB,
  };
}

/** Whether RLIMIT_NPROC set inside a sandbox counts that sandbox's processes only (Linux 5.14: per user namespace). Never for root. */
export function nprocPerSandbox(): boolean {
  const [major = 0, minor = 0] = release().split('.').map((part) => Number.parseInt(part, 10));
  return major > 5 || (major === 5 && minor >= 14);
}

/** The shell lines that set the limits inside (builtins; dash calls RLIMIT_NPROC `-p`, bash and busybox `-u`). A limit that cannot be set stops the launch. */
export function limitLines(limits: SandboxLimits): string[] {
  const lines = [`ulimit -f ${Math.max(1, Math.floor(limits.maxFileBytes / 512))} || { echo 'plinth sandbox: the file size limit could not be set' >&2; exit 126; }`];
  if (nprocPerSandbox()) lines.push(`ulimit -u ${limits.maxProcesses} 2>/dev/null || ulimit -p ${limits.maxProcesses} 2>/dev/null || { echo 'plinth sandbox: the process limit could not be set' >&2; exit 126; }`);
  return lines;
}

/** One child's pids cgroup. */
export interface PidsGroup {
  readonly dir: string;
  /** Whether a fork was refused because the group was full (pids.events `max`). */
  hit(): boolean;
  /** Removes the group once its processes are gone (a few tries). */
  remove(): void;
}

let base: string | null | undefined;
let made = 0;

/** Plinth's own cgroup, where a pids cgroup can be made below it; null when none. Found once. */
function pidsBase(): string | null {
  if (base !== undefined) return base;
  base = null;
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    return base;
  }
  const candidates: string[] = [];
  for (const line of lines) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === '') {
      // cgroup v2: pids must be delegated to plinth's cgroup (in its subtree_control).
      for (const mount of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
        const dir = join(mount, path);
        try {
          if (readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) candidates.push(dir);
        } catch {
          /* not there */
        }
      }
    } else if (controllers!.split(',').includes('pids')) candidates.push(join('/sys/fs/cgroup/pids', path));
  }
  for (const dir of candidates) {
    const probe = join(dir, `plinth-probe-${process.pid}`);
    try {
      mkdirSync(probe);
      const usable = existsSync(join(probe, 'pids.max'));
      rmdirSync(probe);
      if (usable) return (base = dir);
    } catch {
      /* not writable */
    }
  }
  return base;
}

/** Whether a pids cgroup can be made here. */
export function pidsGroupsAvailable(): boolean {
  return pidsBase() !== null;
}

/** A new pids cgroup holding at most `max` processes; undefined where none can be made. */
export function pidsGroup(max: number): PidsGroup | undefined {
  const parent = pidsBase();
  if (parent === null) return undefined;
  const dir = join(parent, `plinth-${process.pid}-${++made}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, 'pids.max'), String(max));
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      /* never made */
    }
    return undefined;
  }
  return {
    dir,
    hit() {
      try {
        return Number(/^max (\d+)/m.exec(readFileSync(join(dir, 'pids.events'), 'utf8'))?.[1] ?? 0) > 0;
      } catch {
        return false;
      }
    },
    remove() {
      let tries = 0;
      const attempt = (): void => {
        try {
          rmdirSync(dir);
        } catch {
          // Its last processes are still being reaped.
          if (++tries < 20) setTimeout(attempt, 100).unref();
        }
      };
      attempt();
    },
  };
}
