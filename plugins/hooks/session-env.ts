/**
 * What a Claude Code hook keeps between runs of a session, outside its process:
 *
 * - `CLAUDE_ENV_FILE`: a file a `SessionStart` (also `Setup`, `CwdChanged`, `FileChanged`) hook
 *   appends `export NAME=value` lines to. plinth reads it after the run — parsed, never executed —
 *   and gives the variables to the later hooks of that session that act for the same principal
 *   (the same plugin, or the same settings scope), so that one plugin's file never reaches another's
 *   hooks.
 * - `CLAUDE_PLUGIN_DATA`: a persistent folder per plugin, `$PLINTH_HOME/plugin-data/<plugin>`
 *   (characters other than letters, digits, `_` and `-` become `-`, as Claude Code names its
 *   folders), created on a hook's first run; a new version of the plugin finds it as it was.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HookDefinition } from './types.js';

/** Claude Code's events whose hooks get `CLAUDE_ENV_FILE` (its hooks reference). */
export const ENV_FILE_EVENTS: ReadonlySet<string> = new Set(['SessionStart', 'Setup', 'CwdChanged', 'FileChanged']);

/** The largest env file read; the rest is ignored (with a warning). */
const MAX_ENV_FILE_BYTES = 64 * 1024;

/** A plugin's persistent data folder under plinth's home (not created). */
export function pluginDataDir(home: string, plugin: string): string {
  return join(home, 'plugin-data', plugin.replace(/[^A-Za-z0-9_-]/g, '-'));
}

/** Whose variables a hook shares: its plugin, or its settings scope. */
export function envPrincipal(hook: Pick<HookDefinition, 'plugin' | 'source'>): string {
  return hook.plugin !== undefined ? `plugin:${hook.plugin}` : `settings:${hook.source}`;
}

/** Names a hook may not set for others: plinth's own, and the peers' that plinth sets itself. */
function reserved(name: string): boolean {
  return /^PLINTH_/.test(name) || ['CLAUDE_ENV_FILE', 'CLAUDE_PROJECT_DIR', 'CLAUDE_PLUGIN_ROOT', 'CLAUDE_PLUGIN_DATA', 'GEMINI_PROJECT_DIR', 'GEMINI_CWD', 'GEMINI_SESSION_ID'].includes(name);
}

/** What reading an env file found: the variables, and each line left out with why. */
export interface EnvFileRead {
  readonly vars: Record<string, string>;
  readonly skipped: string[];
}

/**
 * Reads `export NAME=value` lines (also `NAME=value` and bash's `declare -x NAME="value"`, several
 * on one line) as a shell would assign them, without running anything: single quotes are literal,
 * double quotes and bare words take `\` escapes and `$NAME` / `${NAME}` from the lines before and
 * from `base`. A line with `$(…)` or backticks, or anything that is not an assignment (`source x`,
 * `alias …`), is left out and named in `skipped`.
 */
export function parseEnvFile(text: string, base: Readonly<Record<string, string>>): EnvFileRead {
  const vars: Record<string, string> = {};
  const skipped: string[] = [];
  const lookup = (name: string): string => (Object.hasOwn(vars, name) ? vars[name]! : Object.hasOwn(base, name) ? base[name]! : '');
  text.split(/\r?\n/).forEach((raw, index) => {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const skip = (why: string) => skipped.push(`line ${index + 1}: ${why}`);
    const prefix = /^(?:export|declare\s+-x|declare\s+-gx|typeset\s+-x)\s+/.exec(line);
    if (prefix) line = line.slice(prefix[0].length);
    const found: [string, string][] = [];
    let i = 0;
    while (i < line.length) {
      while (line[i] === ' ' || line[i] === '\t') i++;
      if (i >= line.length || line[i] === '#' || line[i] === ';') break;
      const name = /^[A-Za-z_][A-Za-z0-9_]*=/.exec(line.slice(i));
      if (!name) return skip(`not an assignment (${line.slice(0, 40)}): only NAME=value lines are read, nothing is run`);
      i += name[0].length;
      let value = '';
      let quote: '"' | "'" | undefined;
      for (; i < line.length; i++) {
        const c = line[i]!;
        if (quote === "'") {
          if (c === "'") quote = undefined;
          else value += c;
          continue;
        }
        if (c === '`' || (c === '$' && line[i + 1] === '(')) return skip('a command substitution ($(…) or `…`): plinth never runs what the file says');
        if (c === '\\') {
          const next = line[i + 1];
          if (next === undefined) break;
          if (quote === '"' && !'"\\$`'.includes(next)) value += c;
          value += next;
          i++;
          continue;
        }
        if (c === '$') {
          const ref = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(line.slice(i));
          if (ref) {
            value += lookup((ref[1] ?? ref[2])!);
            i += ref[0].length - 1;
            continue;
          }
          if (line[i + 1] === '{') return skip('a ${…} form other than ${NAME} is not read');
          value += c;
          continue;
        }
        if (quote === '"') {
          if (c === '"') quote = undefined;
          else value += c;
          continue;
        }
        if (c === '"' || c === "'") {
          quote = c;
          continue;
        }
        if (c === ' ' || c === '\t' || c === ';') break;
        value += c;
      }
      if (quote !== undefined) return skip('a quote is never closed');
      found.push([name[0].slice(0, -1), value]);
    }
    for (const [name, value] of found) {
      if (reserved(name)) skip(`${name} is set by plinth and cannot be changed here`);
      else vars[name] = value;
    }
  });
  return { vars, skipped };
}

/**
 * The env files of one hooks plugin and the variables read from them, per session and principal.
 * Files live under `<home>/hook-env/<session>/`, removed when the session's state is dropped.
 */
export class SessionEnvironment {
  private readonly vars = new Map<string, Record<string, string>>();

  constructor(private readonly home: string, private readonly warn: (message: string) => void) {}

  /** The env file a hook of `session` acting for `principal` writes to: created empty when new. */
  fileFor(session: string, principal: string): string {
    const dir = join(this.home, 'hook-env', digest(session));
    const file = join(dir, `${principal.replace(/[^A-Za-z0-9_-]/g, '-')}-${digest(principal).slice(0, 8)}.sh`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, '', { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return file;
  }

  /** Reads the file back after a run (what earlier runs wrote is read again: the file is the state). */
  absorb(session: string, principal: string, file: string, base: Readonly<Record<string, string>>, label: string): void {
    let text: string;
    try {
      const bytes = readFileSync(file);
      if (bytes.length > MAX_ENV_FILE_BYTES) this.warn(`${label}: its CLAUDE_ENV_FILE holds ${bytes.length} bytes; only the first ${MAX_ENV_FILE_BYTES} are read`);
      text = bytes.subarray(0, MAX_ENV_FILE_BYTES).toString('utf8');
    } catch {
      return;
    }
    const read = parseEnvFile(text, base);
    for (const why of read.skipped) this.warn(`${label}: CLAUDE_ENV_FILE ${why}`);
    this.vars.set(key(session, principal), read.vars);
  }

  /** The variables the hooks of `session` acting for `principal` get. */
  varsFor(session: string | undefined, principal: string): Readonly<Record<string, string>> {
    return (session === undefined ? undefined : this.vars.get(key(session, principal))) ?? {};
  }

  /** Forgets a session (its `session_end`): its files go too. */
  drop(session: string): void {
    for (const k of [...this.vars.keys()]) if (k.startsWith(`${session}\0`)) this.vars.delete(k);
    rmSync(join(this.home, 'hook-env', digest(session)), { recursive: true, force: true });
  }
}

function key(session: string, principal: string): string {
  return `${session}\0${principal}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
