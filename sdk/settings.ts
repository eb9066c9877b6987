/**
 * Validating a plugin's own settings with zod. The kernel checks the declared
 * types; a plugin checks values (a positive number, one of some words) with its
 * own schema, and a failure must read like the kernel's: one coded error naming
 * every key at its full path (`plugins.hooks.settings.perMinute: expected a
 * positive integer`), never zod's raw issue list, and never the value, which may
 * be a secret.
 */
import { z } from 'zod';
import { PlinthError } from './errors.js';
import { jsonPath } from './manifest.js';

/** One bad setting: where (`plugins.<plugin>.settings.<key>…`) and what was expected. */
export interface SettingIssue {
  /** The full JSON path, e.g. `plugins.hooks.settings.perMinute`. */
  readonly path: string;
  /** The setting's own name (the first key under `settings`). */
  readonly setting: string;
  readonly message: string;
}

/**
 * Parses `values` (the plugin's `ctx.settings`) with `schema`, or throws one
 * `PLN_E_SETTING_INVALID` whose message lists each bad key with what was
 * expected. A message given in the schema (`z.int().positive({ error: 'expected
 * a positive integer' })`) is kept; zod's default messages are replaced by
 * plain sentences that name no value.
 */
export function parseSettings<S extends z.ZodType>(plugin: string, schema: S, values: unknown): z.output<S> {
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issues = settingIssues(plugin, result.error.issues);
  const first = issues[0];
  const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new PlinthError('PLN_E_SETTING_INVALID', `plugin "${plugin}": ${list}`, {
    plugin,
    hook: 'settings',
    hint: first ? `correct ${first.path} in settings.json (\`plinth config show\` shows where each value comes from)` : 'correct the plugin\'s settings in settings.json',
    details: { ...(first && { setting: first.setting, path: first.path }), issues },
  });
}

/** zod issues about `plugins.<plugin>.settings` as {@link SettingIssue}s, one per key (unknown keys each get their own). */
export function settingIssues(plugin: string, issues: readonly z.core.$ZodIssue[]): SettingIssue[] {
  const base = ['plugins', plugin, 'settings'];
  return issues.flatMap((issue): SettingIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const at = [...issue.path, key];
        return { path: jsonPath([...base, ...at]), setting: String(at[0]), message: 'is not a setting of this plugin' };
      });
    }
    const setting = issue.path.length > 0 ? String(issue.path[0]) : '';
    return [{ path: jsonPath([...base, ...issue.path]), setting, message: describeIssue(issue) }];
  });
}

/**
 * `issue.message` when the schema gave one, else a sentence that says what was
 * expected without quoting the value.
 */
export function describeIssue(issue: z.core.$ZodIssue): string {
  if (!isDefaultMessage(issue)) return issue.message;
  switch (issue.code) {
    case 'invalid_type': {
      const received = /received (\w+)/.exec(issue.message)?.[1];
      return `expected ${typeWord(issue.expected)}${received && received !== 'undefined' ? `, got ${typeWord(received)}` : ''}`;
    }
    case 'too_small':
      return bound(issue.origin, 'least', issue.minimum, issue.inclusive);
    case 'too_big':
      return bound(issue.origin, 'most', issue.maximum, issue.inclusive);
    case 'invalid_value':
      return `expected ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`}`;
    case 'not_multiple_of':
      return `expected a multiple of ${String(issue.divisor)}`;
    case 'invalid_format':
      return `expected ${issue.format === 'regex' ? 'text of the documented form' : `a valid ${issue.format}`}`;
    case 'invalid_union':
      return 'expected one of the documented forms';
    case 'invalid_key':
      return 'has an invalid key';
    default:
      return 'is not valid';
  }
}

const EN = z.locales.en();

/** zod's own English message (the schema set none): replaced by ours. */
function isDefaultMessage(issue: z.core.$ZodIssue): boolean {
  // zod's invalid_type message names the received type, which the finished issue no longer carries.
  if (issue.code === 'invalid_type') return issue.message.startsWith('Invalid input: expected ');
  const fallback = EN.localeError(issue as unknown as z.core.$ZodRawIssue);
  const text = typeof fallback === 'string' ? fallback : fallback?.message;
  return text === issue.message;
}

function typeWord(type: string): string {
  switch (type) {
    case 'int':
      return 'an integer';
    case 'array':
      return 'a list';
    case 'object':
      return 'an object';
    case 'boolean':
      return 'true or false';
    case 'undefined':
      return 'nothing';
    default:
      return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
  }
}

function bound(origin: string, side: 'least' | 'most', limit: number | bigint, inclusive: boolean | undefined): string {
  const n = Number(limit);
  if (origin === 'number' || origin === 'bigint' || origin === 'int') {
    if (side === 'least' && n === 0) return inclusive ? 'expected 0 or more' : 'expected a positive number';
    return inclusive ? `expected a number of at ${side} ${n}` : `expected a number ${side === 'least' ? 'greater' : 'less'} than ${n}`;
  }
  const unit = origin === 'string' ? 'character' : 'item';
  const count = inclusive === false ? (side === 'least' ? n + 1 : n - 1) : n;
  return `expected at ${side} ${count} ${unit}${count === 1 ? '' : 's'}`;
}
