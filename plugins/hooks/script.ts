/**
 * The script a hook runs, when it runs one through an interpreter (`node
 * hooks/check.js`): a guess, used only so that the runner reports a missing
 * script as such instead of as an interpreter error. What trust covers is not
 * guessed: the trust plugin fingerprints every file or folder the command and
 * arguments name (see `trustSubject` in engine.ts).
 */
import { basename, isAbsolute, resolve } from 'node:path';
import type { HookDefinition } from './types.js';

// Per interpreter, the flags that mean "the code is inline (or a module name)": no script file then.
const INLINE_FLAGS: Readonly<Record<string, readonly string[]>> = {
  node: ['-e', '--eval', '-p', '--print'],
  python: ['-c', '-m'],
  python3: ['-c', '-m'],
  bash: ['-c'],
  sh: ['-c'],
};

/** The absolute path of the script `hook` runs, or undefined when it runs none (`bash -c …`, `npx pkg`). */
export function scriptOf(hook: Pick<HookDefinition, 'action' | 'cwd'>): string | undefined {
  if (hook.action.type !== 'command') return undefined;
  const program = basename(hook.action.command);
  if (program === 'npx' || program === 'uvx') return undefined;
  const inline = INLINE_FLAGS[program] ?? [];
  for (const arg of hook.action.args) {
    if (inline.includes(arg)) return undefined;
    if (arg.startsWith('-')) continue;
    return isAbsolute(arg) ? arg : resolve(hook.cwd, arg);
  }
  return undefined;
}
