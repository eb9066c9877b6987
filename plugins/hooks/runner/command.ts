/**
 * The whitelist, applied to what actually runs. Allowed programs (names looked
 * up on PATH, or absolute paths) and a hook's command are both resolved to real
 * paths; the hook runs only when its real path is one of the allowed ones, and
 * that real path is what gets spawned. So `./node` in a workspace or
 * `/tmp/evil/node` is refused although its name is on the list.
 */
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** The seed's whitelist: the default of the `allowedCommands` setting. */
export const DEFAULT_ALLOWED_COMMANDS: readonly string[] = ['node', 'python', 'python3', 'bash', 'sh', 'npx', 'uvx', 'uv'];

export type CommandResolution =
  | { readonly ok: true; /** The real path to spawn. */ readonly file: string }
  | { readonly ok: false; readonly failure: 'not_allowed' | 'spawn_failed'; /** Why, without naming the hook. */ readonly detail: string };

export interface CommandResolver {
  /** Resolves a hook's `command` (bare name: PATH; path: against `cwd`) and checks it against the whitelist. */
  resolve(command: string, cwd: string): Promise<CommandResolution>;
}

export interface CommandResolverOptions {
  readonly allowed: readonly string[];
  /** The PATH to look names up on (the host's, captured once). */
  readonly pathEnv: string | undefined;
  readonly log?: { warn(msg: string): void };
}

const WINDOWS = process.platform === 'win32';

/** True when `command` names a file by path rather than a program on PATH. */
function isPath(command: string): boolean {
  return command.includes('/') || (WINDOWS && command.includes('\\'));
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    if (!WINDOWS) await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const realOrUndefined = (file: string): Promise<string | undefined> => realpath(file).catch(() => undefined);

/** The real path of the first executable `name` on `pathEnv`; relative PATH entries (`.`, ``) are ignored. */
async function lookUp(name: string, pathEnv: string | undefined): Promise<string | undefined> {
  const dirs = (pathEnv ?? '').split(delimiter).filter((dir) => dir !== '' && isAbsolute(dir));
  const exts = WINDOWS ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean)] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (await isExecutableFile(candidate)) return realOrUndefined(candidate);
    }
  }
  return undefined;
}

export function createCommandResolver(options: CommandResolverOptions): CommandResolver {
  const lookups = new Map<string, Promise<string | undefined>>();
  /** PATH lookups are cached for the runner's life: PATH is captured once. */
  const find = (name: string): Promise<string | undefined> => {
    let found = lookups.get(name);
    if (found === undefined) {
      found = lookUp(name, options.pathEnv);
      lookups.set(name, found);
    }
    return found;
  };

  let allowedReal: Promise<ReadonlyMap<string, string>> | undefined;
  /** Real path → the whitelist entry it came from; entries that resolve to nothing are reported once. */
  const allowed = (): Promise<ReadonlyMap<string, string>> => {
    allowedReal ??= (async () => {
      const map = new Map<string, string>();
      for (const entry of options.allowed) {
        if (!isPath(entry) && entry !== '') {
          const real = await find(entry);
          if (real !== undefined) map.set(real, entry);
        } else if (isAbsolute(entry)) {
          const real = await realOrUndefined(entry);
          if (real !== undefined) map.set(real, entry);
          else options.log?.warn(`allowed command ${entry} does not exist; hooks that use it will not start`);
        } else {
          options.log?.warn(`allowed command "${entry}" is ignored: give a program name or an absolute path`);
        }
      }
      return map;
    })();
    return allowedReal;
  };

  const listed = (): string => `allowed: ${options.allowed.join(', ') || 'nothing'} (setting allowedCommands)`;

  return {
    async resolve(command, cwd) {
      const map = await allowed();
      if (command === '') return { ok: false, failure: 'not_allowed', detail: 'its command is empty' };
      if (!isPath(command)) {
        const real = await find(command);
        if (real === undefined) {
          return options.allowed.includes(command)
            ? { ok: false, failure: 'spawn_failed', detail: `its command "${command}" was not found on PATH` }
            : { ok: false, failure: 'not_allowed', detail: `its command "${command}" is not an allowed program (${listed()})` };
        }
        if (map.has(real)) return { ok: true, file: real };
        return { ok: false, failure: 'not_allowed', detail: `its command "${command}" (${real}) is not an allowed program (${listed()})` };
      }
      const absolute = resolve(cwd, command);
      const real = await realOrUndefined(absolute);
      if (real === undefined) {
        return options.allowed.includes(absolute)
          ? { ok: false, failure: 'spawn_failed', detail: `its command ${absolute} does not exist` }
          : { ok: false, failure: 'not_allowed', detail: `its command "${command}" (${absolute}) does not exist and is not an allowed program (${listed()})` };
      }
      if (map.has(real)) return { ok: true, file: real };
      const shown = real === absolute ? absolute : `${absolute} → ${real}`;
      return {
        ok: false,
        failure: 'not_allowed',
        detail: `its command "${command}" (${shown}) is not one of the allowed programs, whatever its name (${listed()})`,
      };
    },
  };
}
