/**
 * Is bubblewrap usable here? Found once by running it the way the sandbox
 * will (every namespace unshared, /proc of its own), then cached: a program
 * that is installed but cannot create namespaces (a container without user
 * namespaces) is as unavailable as a missing one, and the reason says which.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { SandboxAvailability } from 'plinth/sdk';

/** Runs a program to its end: the launcher's `run`, in the plugin. */
export type ProbeRun = (file: string, args: readonly string[]) => Promise<{ exitCode: number | null; stdout: string; stderr: string; spawnError?: string }>;

export interface ProbeOptions {
  /** The bwrap to use: `PLINTH_BWRAP`, else `bwrap` on PATH. */
  readonly program?: string;
  readonly run: ProbeRun;
  readonly platform?: NodeJS.Platform;
}

/** Where a program is (real path): the given path, else the first `name` on PATH; undefined when none. */
export function findProgram(name: string, program: string | undefined, pathEnv = process.env.PATH ?? ''): string | undefined {
  const candidates = program !== undefined && program !== '' ? [program] : pathEnv.split(delimiter).filter((d) => d.startsWith('/')).map((d) => join(d, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      /* next */
    }
  }
  return undefined;
}

export async function probeSandbox(options: ProbeOptions): Promise<SandboxAvailability> {
  const platform = options.platform ?? process.platform;
  if (platform !== 'linux') return { available: false, reason: `no OS sandbox for ${platform} yet: plinth confines child processes with bubblewrap on Linux only` };
  const program = findProgram('bwrap', options.program);
  if (program === undefined) {
    const where = options.program !== undefined && options.program !== '' ? `at ${options.program} (PLINTH_BWRAP)` : 'on PATH';
    return { available: false, reason: `bubblewrap (bwrap) was not found ${where}: install it (Debian/Ubuntu: apt-get install bubblewrap)` };
  }
  const version = await options.run(program, ['--version']).catch((error: unknown) => ({ exitCode: null, stdout: '', stderr: String(error), spawnError: String(error) }));
  if (version.exitCode !== 0) return { available: false, program, reason: `${program} --version failed: ${(version.spawnError ?? version.stderr).trim().slice(0, 200)}` };
  const trial = await options.run(program, ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true']);
  if (trial.exitCode !== 0) {
    const why = (trial.spawnError ?? trial.stderr).trim().slice(0, 300);
    return { available: false, program, reason: `bubblewrap cannot create its namespaces here (${why || `exit ${trial.exitCode}`}): enable user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run plinth where they are allowed` };
  }
  return { available: true, kind: 'bubblewrap', program, version: version.stdout.trim().replace(/^bubblewrap\s*/, '') };
}
