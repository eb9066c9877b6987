/**
 * The script a hook runs, when it runs one through an interpreter or a runner: `node
 * hooks/check.js`, `node --import tsx check.ts`, `uv run --with rich check.py`, `uv run --script
 * check.py` (a `#!/usr/bin/env -S uv run --script` line), `bun run check.ts`, `deno run -A
 * check.ts`. Used so that the runner reports a missing script as such (`script_missing`) instead
 * of as an interpreter's error.
 *
 * Never a guess: each program's flags that take a value (`--import tsx`, `--with rich`) are
 * skipped with their value, and a word is the script only where that program reads one. A
 * subcommand (`uv run`), a module (`python -m`), inline code (`node -e`), a package a runner
 * downloads (`npx`, `uvx`, `pnpm dlx`, `bunx`), a `package.json` script (`bun run dev`) or a
 * program plinth does not know names no script. What trust covers is not decided here: the
 * trust plugin fingerprints every file or folder the command and its arguments name.
 */
import { basename, isAbsolute, resolve } from 'node:path';
import type { HookDefinition } from './types.js';

/** How one program reads its arguments, up to its script. */
interface Reader {
  /** Flags after which the code is inline or a module: no script file. */
  readonly inline?: readonly string[];
  /** Flags that take the next word as their value (`--import tsx`); `--flag=value` needs no entry. */
  readonly values?: readonly string[];
}

const PYTHON: Reader = { inline: ['-c', '-m'], values: ['-W', '-X', '-Q'] };
const NODE: Reader = {
  inline: ['-e', '--eval', '-p', '--print'],
  values: ['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--env-file', '--input-type', '--title', '--stack-size', '--inspect-port', '--watch-path'],
};
const SHELL: Reader = { inline: ['-c', '-s'], values: ['-o', '+o', '-O', '+O'] };

/** Interpreters whose first word that is not a flag is the script. */
const INTERPRETERS: Readonly<Record<string, Reader>> = {
  python: PYTHON,
  python3: PYTHON,
  node: NODE,
  nodejs: NODE,
  tsx: NODE,
  'ts-node': NODE,
  bash: SHELL,
  sh: SHELL,
  dash: SHELL,
  zsh: SHELL,
  ksh: SHELL,
  ruby: { inline: ['-e'], values: ['-r', '-I', '-C'] },
  perl: { inline: ['-e', '-E'], values: ['-I', '-M', '-m'] },
  php: { inline: ['-r'], values: ['-c', '-d'] },
};

/** `uv run`'s flags that take a value (uv 0.4 – 0.9). */
const UV_RUN_VALUES = [
  '--with', '-w', '--with-editable', '--with-requirements', '--python', '-p', '--project', '--directory', '--env-file', '--extra', '--group', '--only-group',
  '--no-group', '--package', '--index', '--default-index', '--index-url', '-i', '--extra-index-url', '--find-links', '-f', '--index-strategy', '--keyring-provider',
  '--resolution', '--prerelease', '--exclude-newer', '--link-mode', '--cache-dir', '--config-file', '--python-platform', '--refresh-package', '--upgrade-package',
  '-P', '--reinstall-package', '--no-build-package', '--no-binary-package', '--config-setting', '-C', '--color', '--allow-insecure-host', '--no-sources-package',
];
/** uv's own flags before its subcommand that take a value. */
const UV_GLOBAL_VALUES = ['--directory', '--project', '--cache-dir', '--config-file', '--color', '--python-preference', '--allow-insecure-host'];
const DENO_RUN_VALUES = ['-c', '--config', '--import-map', '--lock', '--cert', '--location', '--seed', '--v8-flags', '--env-file', '--ext', '--inspect', '--inspect-brk', '--inspect-wait'];
const BUN_VALUES = ['--cwd', '-r', '--preload', '--env-file', '--tsconfig-override', '--config', '-c'];

/** A word that names a script file by its form: a path, or a script's extension. */
const SCRIPT_LIKE = /[/\\]|\.(?:[cm]?[jt]sx?|py[w]?|sh|bash|rb|pl|php|lua)$/i;

/** The absolute path of the script `hook` runs, or undefined when it runs none (`bash -c …`, `npx pkg`, `uv run pytest`). */
export function scriptOf(hook: Pick<HookDefinition, 'action' | 'cwd'>): string | undefined {
  if (hook.action.type !== 'command') return undefined;
  const word = scriptWord(hook.action.command, hook.action.args);
  return word === undefined ? undefined : isAbsolute(word) ? word : resolve(hook.cwd, word);
}

/** The script word of `command args`, as written, or undefined (see the module comment). */
export function scriptWord(command: string, args: readonly string[]): string | undefined {
  const program = programName(command);
  const interpreter = INTERPRETERS[program];
  if (interpreter) return firstOperand(args, interpreter)?.word;
  switch (program) {
    case 'uv': {
      const sub = firstOperand(args, { values: UV_GLOBAL_VALUES });
      if (sub?.word !== 'run') return undefined; // `uv tool run` is uvx; `uv pip …`, `uv sync`: no script
      return runnerTarget(args.slice(sub.index + 1), { inline: ['-m', '--module'], values: UV_RUN_VALUES }, ['--script', '-s']);
    }
    case 'deno': {
      const sub = firstOperand(args, { values: ['--config', '-c'] });
      if (sub === undefined) return undefined;
      // `deno run x.ts`, and `deno x.ts` (Deno 2); `deno task`, `deno eval`, …: none. A URL or `npm:`/`jsr:` specifier is downloaded, not a file.
      const target = sub.word === 'run' ? firstOperand(args.slice(sub.index + 1), { values: DENO_RUN_VALUES })?.word : SCRIPT_LIKE.test(sub.word) ? sub.word : undefined;
      return target !== undefined && !/^[a-z][a-z0-9+.-]*:/i.test(target) ? target : undefined;
    }
    case 'bun': {
      const sub = firstOperand(args, { values: BUN_VALUES });
      if (sub === undefined) return undefined;
      if (sub.word === 'run') return runnerTarget(args.slice(sub.index + 1), { values: BUN_VALUES });
      // `bun x.ts` runs a file; `bun test`, `bun x`, `bun install`, a package.json script: none.
      return SCRIPT_LIKE.test(sub.word) ? sub.word : undefined;
    }
    default:
      // npx, uvx, pnpm dlx, pnpx, bunx, yarn dlx, npm exec/run: a package or a package.json script, never a file named here.
      // Any other program: plinth does not know how it reads its arguments, so it names no script.
      return undefined;
  }
}

/**
 * What a runner (`uv run`, `bun run`) runs after its own flags: a script when the word looks like
 * one (or a `scriptFlags` flag said so), another known interpreter's script (`uv run python x.py`),
 * or nothing (a command: `uv run pytest`, a package.json script: `bun run dev`).
 */
function runnerTarget(args: readonly string[], reader: Reader, scriptFlags: readonly string[] = []): string | undefined {
  const target = firstOperand(args, reader);
  if (target === undefined) return undefined;
  const flagged = args.slice(0, target.index).some((arg) => scriptFlags.includes(arg));
  if (flagged || SCRIPT_LIKE.test(target.word)) return target.word;
  // `uv run python x.py`, `uv run -- node x.js`: the program's own script.
  return INTERPRETERS[programName(target.word)] ? scriptWord(target.word, args.slice(target.index + 1)) : undefined;
}

/** The first word of `args` that is not a flag (nor a flag's value), and where it is; undefined at an inline flag or when there is none. */
function firstOperand(args: readonly string[], reader: Reader): { word: string; index: number } | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return i + 1 < args.length ? { word: args[i + 1]!, index: i + 1 } : undefined;
    if (reader.inline?.includes(arg)) return undefined;
    if (arg === '-') return undefined; // the script is stdin
    if (arg.startsWith('-') || arg.startsWith('+')) {
      if (!arg.includes('=') && reader.values?.includes(arg)) i++;
      continue;
    }
    return { word: arg, index: i };
  }
  return undefined;
}

/** `python3.12` → `python`, `/usr/bin/node` → `node`, `node.exe` → `node`. */
function programName(command: string): string {
  return basename(command)
    .replace(/\.exe$/i, '')
    .replace(/^(python|ruby|perl|php)[\d.]+$/, '$1');
}
