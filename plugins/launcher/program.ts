/**
 * Program resolution: a name is looked up on the child's PATH (absolute
 * entries only: `.` or an empty entry would run whatever the working folder
 * holds), a path is taken relative to the working directory; either way the
 * real path (symlinks followed) is what gets started. Synchronous, so that
 * `start()` returns the child at once; a handful of stat calls.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { PlinthError } from 'plinth/sdk';

const WINDOWS = process.platform === 'win32';

/** True when `program` names a file by path rather than a program on PATH. */
export function isPath(program: string): boolean {
  return program.includes('/') || (WINDOWS && program.includes('\\'));
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (!WINDOWS) accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The real path of `program`, or a `PLN_E_LAUNCH_NOT_FOUND` naming what was looked at. */
export function resolveProgram(program: string, cwd: string, pathEnv: string | undefined, owner: string): string {
  if (isPath(program)) {
    const full = isAbsolute(program) ? program : resolve(cwd, program);
    if (isExecutableFile(full)) return realpathSync(full);
    throw new PlinthError('PLN_E_LAUNCH_NOT_FOUND', `cannot start ${full}: it is not an executable file`, {
      plugin: owner,
      hint: 'check the path and its execute permission',
      details: { program: full },
    });
  }
  const exts = WINDOWS ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean)] : [''];
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    for (const ext of exts) {
      const candidate = join(dir, program + ext);
      if (isExecutableFile(candidate)) return realpathSync(candidate);
    }
  }
  throw new PlinthError('PLN_E_LAUNCH_NOT_FOUND', `cannot start "${program}": it was not found on PATH`, {
    plugin: owner,
    hint: `install ${program}, or give its full path`,
    details: { program },
  });
}

/** Throws `PLN_E_LAUNCH_CWD` unless `cwd` is a folder. */
export function checkCwd(cwd: string, owner: string): void {
  let folder = false;
  try {
    folder = statSync(cwd).isDirectory();
  } catch {
    /* missing */
  }
  if (!folder) {
    throw new PlinthError('PLN_E_LAUNCH_CWD', `cannot start a process in ${cwd}: its working directory does not exist`, {
      plugin: owner,
      hint: 'create the folder, or correct the working directory (cwd) that names it',
      details: { cwd },
    });
  }
}
