/**
 * Claude Code's permission-rule syntax, as a hook's `if` field uses it: the hook runs only when the
 * tool call matches the one rule (`"if": "Bash(git *)"`). Read as Claude Code's permissions
 * reference describes rules:
 *
 * - `Tool` or `Tool(*)`: every call of the tool. The tool name may hold `*` globs (`mcp__github__*`);
 *   `mcp__server` alone is every tool of that server.
 * - `Bash(git *)`, `PowerShell(Remove-Item *)`: the command, tested per subcommand (split at `&&`,
 *   `||`, `;`, `|`, `|&`, `&` and new lines; the commands inside `$()` and backticks too), after
 *   leading `VAR=value` assignments and the wrappers `timeout`, `time`, `nice`, `nohup`, `stdbuf`,
 *   `command`, `builtin`, `noglob` and a bare `xargs` are taken off. `*` is any text; a trailing
 *   ` *` (or `:*`) also matches the bare command (`Bash(ls *)` is `ls` and `ls -la`, not `lsof`).
 *   A pattern that says more than the command name matches anyway when the command has `$()`,
 *   backticks or `$VAR` (it cannot be known), and so does any pattern when the command cannot be
 *   read (an open quote): the filter fails open, as Claude Code's does.
 * - `Read(./secrets/**)`, `Edit(src/**)`, `Edit(*.ts)`: a gitignore-style path against the file the
 *   call names (`file_path`, `notebook_path`, `path`): `//abs` from the root, `~/x` from the home
 *   folder, `/x` from the project, `x` and `./x` from the working folder; a pattern without a `/`
 *   (`*.ts`, `.env`) matches at any depth. `Edit(…)` covers `Edit`, `Write`, `MultiEdit`,
 *   `NotebookEdit`; `Read(…)` covers `Read`, `Glob`, `Grep`.
 * - `WebFetch(domain:example.com)`: the URL's host, case-insensitive; `*.example.com` any subdomain
 *   (not the domain itself), another `*` one label.
 * - `Agent(model:opus)`, `Bash(run_in_background:true)`: one input parameter, `*` a wildcard; an
 *   absent parameter never matches. `Agent(Explore)` is the subagent, `Skill(name)` the skill.
 *
 * A rule that cannot be read is reported where the hook is defined (`PLN_E_HOOK_INVALID`), with the
 * fix, before anything runs.
 */
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import picomatch from 'picomatch';

/** A rule, read. */
export interface PermissionRule {
  /** As written. */
  readonly text: string;
  /** The tool-name part (may hold `*`). */
  readonly tool: string;
  /** What is between the parentheses; undefined for a bare tool name (or `Tool(*)`). */
  readonly spec?: string;
}

/** The facts a rule is tested against. */
export interface ToolCall {
  /** The tool as Claude Code names it (`Bash`, `Edit`, `mcp__github__create_issue`). */
  readonly tool: string;
  /** The tool's input (`tool_input`). */
  readonly input: Readonly<Record<string, unknown>>;
  /** The working folder relative paths are read from. */
  readonly cwd: string;
  /** The project folder (`/x` patterns). */
  readonly projectDir: string;
  /** `~` (the user's home folder by default). */
  readonly home?: string;
}

export type RuleParse = { readonly ok: true; readonly rule: PermissionRule } | { readonly ok: false; readonly why: string; readonly fix: string };

const TOOL_NAME = /^[A-Za-z0-9_*.-]+$/;
const PARAM = /^([A-Za-z_][A-Za-z0-9_]*):(.*)$/s;
const SHELL_TOOLS = new Set(['Bash', 'PowerShell']);
/** The file tools a `Read(…)` or `Edit(…)` rule covers (Claude Code checks file access through these two). */
const FILE_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  Edit: ['Edit', 'Write', 'MultiEdit', 'NotebookEdit'],
  Read: ['Read', 'Glob', 'Grep'],
};
const FILE_TOOLS = new Set(['Read', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Glob', 'Grep']);
/** Each tool's primary field: matched by the rule's own form, never as `field:value` (Claude Code refuses that too). */
const PRIMARY: Readonly<Record<string, string>> = { Bash: 'command', PowerShell: 'command', Read: 'file_path', Edit: 'file_path', Write: 'file_path', MultiEdit: 'file_path', NotebookEdit: 'notebook_path', Glob: 'path', Grep: 'path', WebFetch: 'url' };

/** Reads one rule; never throws. */
export function parsePermissionRule(text: string): RuleParse {
  const example = 'e.g. "Bash(git *)", "Edit(src/**)", "Read(./secrets/**)", "WebFetch(domain:example.com)" or "mcp__github__create_issue"';
  const bad = (why: string, fix = `write one permission rule, ${example}`): RuleParse => ({ ok: false, why: `"if": ${JSON.stringify(text)} is not a permission rule: ${why}`, fix });
  const rule = text.trim();
  if (rule === '') return bad('it is empty');
  const open = rule.indexOf('(');
  if (open === -1) {
    if (rule.includes(')')) return bad('a ")" without its "("');
    if (/\s/.test(rule)) return bad('a rule is one tool name, optionally with a pattern in parentheses; there is no "&&", "||" or list', 'define one hook handler per rule');
    if (!TOOL_NAME.test(rule)) return bad('the tool name has characters a tool name cannot have');
    return { ok: true, rule: { text, tool: rule } };
  }
  const tool = rule.slice(0, open).trim();
  if (tool === '') return bad('the tool name before "(" is missing');
  if (!TOOL_NAME.test(tool)) return bad(`"${tool}" is not a tool name`);
  if (!rule.endsWith(')')) {
    return rule.lastIndexOf(')') > open
      ? bad('there is text after its closing ")" (a rule is one tool and one pattern; there is no "&&", "||" or list)', 'define one hook handler per rule')
      : bad('its "(" is never closed');
  }
  const spec = rule.slice(open + 1, -1);
  let depth = 0;
  for (const c of spec) {
    if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return bad('there is text after its closing ")" (a rule is one tool and one pattern; there is no "&&", "||" or list)', 'define one hook handler per rule');
  }
  if (spec.trim() === '') return bad(`"${tool}()" has an empty pattern`, `write "${tool}" for every call, or a pattern such as "${tool}(…*)"`);
  if (spec === '*') return { ok: true, rule: { text, tool } };
  const param = PARAM.exec(spec);
  const primary = PRIMARY[tool];
  if (param !== undefined && param !== null && primary !== undefined && param[1] === primary) {
    return bad(`"${param[1]}" is ${tool}'s own field, which the rule's pattern already matches (a "${param[1]}:" rule could be bypassed)`, `write "${tool}(${param[2]})"`);
  }
  if (tool === 'WebFetch' && !spec.startsWith('domain:')) return bad('a WebFetch rule names a domain', `write "WebFetch(domain:${spec.replace(/^https?:\/\//, '').split('/')[0]})"`);
  if (tool === 'WebFetch' && spec.slice('domain:'.length).trim() === '') return bad('the domain is missing', 'write "WebFetch(domain:example.com)"');
  if (FILE_TOOLS.has(tool)) {
    try {
      picomatch.makeRe(spec);
    } catch (error) {
      return bad(`"${spec}" is not a valid path pattern (${(error as Error).message})`);
    }
  }
  return { ok: true, rule: { text, tool, spec } };
}

/** Whether `call` matches `rule`. */
export function matchesPermissionRule(rule: PermissionRule, call: ToolCall): boolean {
  if (!toolMatches(rule.tool, call.tool, rule.spec !== undefined)) return false;
  const spec = rule.spec;
  if (spec === undefined) return true;
  const param = PARAM.exec(spec);
  const shell = SHELL_TOOLS.has(rule.tool);
  // `Bash(ls:*)` is the trailing wildcard; `Bash(run_in_background:true)` a parameter the input has.
  if (param !== null && rule.tool === 'WebFetch' && param[1] === 'domain') return domainMatches(param[2]!, call.input.url);
  if (param !== null && !(shell && (spec.endsWith(':*') || !Object.hasOwn(call.input, param[1]!)))) {
    if (!Object.hasOwn(call.input, param[1]!)) return false;
    return paramMatches(param[2]!, call.input[param[1]!]);
  }
  if (shell) {
    const command = call.input.command;
    return typeof command === 'string' && commandMatches(spec, command, rule.tool === 'PowerShell');
  }
  if (FILE_TOOLS.has(rule.tool) || FILE_FAMILIES[rule.tool] !== undefined) {
    const path = [call.input.file_path, call.input.notebook_path, call.input.path].find((v): v is string => typeof v === 'string' && v !== '');
    return path !== undefined && pathMatches(spec, path, call);
  }
  const subject = ['subagent_type', 'skill', 'name', 'command', 'url', 'path', 'file_path', 'query', 'pattern'].map((k) => call.input[k]).find((v): v is string => typeof v === 'string');
  return subject !== undefined && wildcard(spec).test(subject);
}

/** The tool part: a name (with `*` globs), a file family (`Edit` covers `Write`), or `mcp__server` for every tool of the server. */
function toolMatches(pattern: string, tool: string, withSpec: boolean): boolean {
  if (pattern.includes('*')) return wildcard(pattern).test(tool);
  if (pattern === tool) return true;
  if (withSpec && FILE_FAMILIES[pattern]?.includes(tool)) return true;
  return /^mcp__[^_*]+(?:_[^_*]+)*$/.test(pattern) && !pattern.slice(5).includes('__') && tool.startsWith(`${pattern}__`);
}

/** `*` as any text, everything else literal, the whole string. */
function wildcard(pattern: string, flags = ''): RegExp {
  return new RegExp(`^${pattern.split('*').map(escape).join('.*')}$`, `s${flags}`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function paramMatches(pattern: string, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
  return text !== undefined && wildcard(pattern).test(text);
}

function domainMatches(pattern: string, url: unknown): boolean {
  if (typeof url !== 'string') return false;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return false;
  }
  const want = pattern.trim().toLowerCase().replace(/\.$/, '');
  if (want === '*') return true;
  if (want.startsWith('*.')) {
    const rest = want.slice(2);
    return host.endsWith(`.${rest}`) && new RegExp(`^${rest.split('*').map(escape).join('[^.]*')}$`).test(host.slice(host.length - rest.length));
  }
  return new RegExp(`^${want.split('*').map(escape).join('[^.]*')}$`).test(host);
}

function pathMatches(pattern: string, path: string, call: ToolCall): boolean {
  const home = call.home ?? homedir();
  const file = resolve(call.cwd, path.startsWith('~/') ? `${home}/${path.slice(2)}` : path);
  let base: string;
  let rest: string;
  if (pattern.startsWith('//')) [base, rest] = ['/', pattern.slice(2)];
  else if (pattern.startsWith('~/')) [base, rest] = [home, pattern.slice(2)];
  else if (pattern.startsWith('/')) [base, rest] = [call.projectDir, pattern.slice(1)];
  else {
    const relative = pattern.replace(/^(?:\.\/)+/, '');
    // gitignore: a pattern with no "/" in it (`*.ts`, `.env`) matches at any depth.
    [base, rest] = [call.cwd, pattern.includes('/') ? relative : `**/${relative}`];
  }
  const absolute = `${resolve(isAbsolute(base) ? base : resolve(base)).replace(/\/$/, '')}/${rest}`.replace(/^\/\//, '/');
  const test = picomatch([absolute, `${absolute.replace(/\/$/, '')}/**`], { dot: true });
  return test(file);
}

/** Whether any subcommand of `command` matches the pattern (Claude Code's Bash matching, fail open). */
function commandMatches(spec: string, command: string, caseless: boolean): boolean {
  const pattern = spec.endsWith(':*') ? `${spec.slice(0, -2)} *` : spec;
  if (pattern.trim() === '*') return true;
  const parsed = subcommands(command);
  if (parsed === undefined) return true; // cannot be read: fail open
  const words = pattern.trim().split(/\s+/);
  const saysMore = words.length > 1 && !(words.length === 2 && words[1] === '*');
  if (saysMore && parsed.dynamic) return true;
  const flags = caseless ? 'i' : '';
  const test = pattern.endsWith(' *')
    ? new RegExp(`^${pattern.slice(0, -2).split('*').map(escape).join('.*')}(?:\\s.*)?$`, `s${flags}`)
    : wildcard(pattern, flags);
  return parsed.commands.some((c) => test.test(c));
}

const WRAPPERS = new Set(['time', 'nohup', 'command', 'builtin', 'noglob', 'timeout', 'nice', 'stdbuf', 'xargs']);

/**
 * The simple commands of a shell command line, each with its leading assignments and wrappers taken
 * off; `dynamic` when it has `$()`, backticks or `$VAR`. Undefined when it cannot be read (an open quote).
 */
export function subcommands(line: string): { readonly commands: string[]; readonly dynamic: boolean } | undefined {
  const commands: string[] = [];
  let dynamic = false;
  const walk = (text: string): boolean => {
    let current = '';
    let quote: '"' | "'" | undefined;
    const flush = () => {
      const simple = stripPrefixes(current);
      if (simple !== '') commands.push(simple);
      current = '';
    };
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (quote === "'") {
        if (c === "'") quote = undefined;
        current += c;
        continue;
      }
      if (c === '\\') {
        current += c + (text[i + 1] ?? '');
        i++;
        continue;
      }
      if (c === '$' && text[i + 1] === '(') {
        const end = closing(text, i + 2);
        if (end === -1) return false;
        dynamic = true;
        if (!walk(text.slice(i + 2, end))) return false;
        current += '$()';
        i = end;
        continue;
      }
      if (c === '`') {
        const end = text.indexOf('`', i + 1);
        if (end === -1) return false;
        dynamic = true;
        if (!walk(text.slice(i + 1, end))) return false;
        current += '``';
        i = end;
        continue;
      }
      if (c === '$' && /[A-Za-z_{]/.test(text[i + 1] ?? '')) dynamic = true;
      if (quote === '"') {
        if (c === '"') quote = undefined;
        current += c;
        continue;
      }
      if (c === '"' || c === "'") {
        quote = c;
        current += c;
        continue;
      }
      if (c === ';' || c === '\n' || c === '&' || c === '|') {
        flush();
        if ((c === '&' || c === '|') && (text[i + 1] === c || (c === '|' && text[i + 1] === '&'))) i++;
        continue;
      }
      if (c === '(' || c === ')') {
        flush();
        continue;
      }
      current += c;
    }
    if (quote !== undefined) return false;
    flush();
    return true;
  };
  return walk(line) ? { commands, dynamic } : undefined;
}

/** The index of the `)` closing a `$(` whose text starts at `from`, or -1. */
function closing(text: string, from: number): number {
  let depth = 1;
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '\\') i++;
    else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** A simple command without its leading `VAR=value` words and wrappers (`timeout 30 npm test` is `npm test`). */
function stripPrefixes(simple: string): string {
  const words = simple.trim().split(/\s+/).filter(Boolean);
  let i = 0;
  for (;;) {
    const word = words[i];
    if (word === undefined) break;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      i++;
      continue;
    }
    if (!WRAPPERS.has(word)) break;
    const next = words[i + 1];
    if (word === 'command' && (next === '-v' || next === '-V')) break; // a lookup, not a run
    if (word === 'xargs' && next?.startsWith('-')) break; // only a bare xargs is taken off
    i++;
    if (word === 'timeout') {
      while (words[i]?.startsWith('-')) i++;
      i++; // the duration
    } else if (word === 'nice') {
      if (words[i] === '-n') i += 2;
      else if (/^-\d+$/.test(words[i] ?? '')) i++;
    } else if (word === 'stdbuf' || word === 'time') {
      while (words[i]?.startsWith('-')) i++;
    }
  }
  return words.slice(i).join(' ');
}
