/**
 * The decision itself, without I/O: what a subject's source and the stored
 * record say, how to name the subject to a person, and the command that
 * approves it.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TrustRecord } from './store.js';
import type { TrustSubject, TrustVerdict } from 'plinth/sdk';

/** What the store says about a subject, before anyone is asked. */
export type Assessment =
  | { readonly trusted: true; readonly level: 'builtin' | 'user' | 'approved'; readonly pin: boolean }
  | { readonly trusted: false; readonly state: 'pending' | 'changed'; readonly record: TrustRecord | undefined };

/**
 * builtin: trusted. user: trusted on first use (then pinned) and while the
 * fingerprint matches its pin or approval. workspace, extension, downloaded:
 * trusted only by an approval of this very fingerprint; a pin is not an approval.
 */
export function assess(subject: TrustSubject, fingerprint: string, record: TrustRecord | undefined): Assessment {
  if (subject.source === 'builtin') return { trusted: true, level: 'builtin', pin: false };
  if (subject.source === 'user') {
    if (!record) return { trusted: true, level: 'user', pin: true };
    if (record.fingerprint === fingerprint) return { trusted: true, level: record.how === 'approved' ? 'approved' : 'user', pin: false };
    return { trusted: false, state: 'changed', record };
  }
  if (record?.how === 'approved') {
    if (record.fingerprint === fingerprint) return { trusted: true, level: 'approved', pin: false };
    return { trusted: false, state: 'changed', record };
  }
  return { trusted: false, state: 'pending', record: undefined };
}

const KIND_LABELS: Readonly<Record<TrustSubject['kind'], string>> = { hook: 'hook', plugin: 'plugin', 'mcp-server': 'MCP server' };

/** `workspace hook "workspace:lint-guard"`. */
export function describeSubject(subject: Pick<TrustSubject, 'kind' | 'id' | 'source'>): string {
  return `${subject.source} ${KIND_LABELS[subject.kind]} "${printable(subject.id)}"`;
}

/** C0 and C1 control characters and bidirectional overrides. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Control characters (escape sequences could rewrite the prompt a person
 * reads) and bidirectional overrides, made visible. Subjects come from files
 * an attacker may write.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The first 12 hex digits: enough for a person to compare. */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.slice(0, 12);
}

/** Where the kernel runs, to repeat in a command only what differs from the defaults. */
export interface CommandContext {
  readonly home: string;
  readonly workspace: string;
  readonly profile?: string | undefined;
}

/**
 * The exact command that approves a subject: `plinth hooks trust <id>` for
 * hooks (the hooks plugin finds the hook again and approves it as it is),
 * `plinth trust approve <kind> <id>` otherwise. Global options are added only
 * when this kernel's home (or, for hooks, workspace and profile; for another
 * workspace subject, its workspace) would not be the command's default.
 */
export function approveCommand(
  kind: TrustSubject['kind'],
  id: string,
  where: CommandContext,
  env: Record<string, string | undefined> = process.env,
  workspace?: string,
): string {
  const words = kind === 'hook' ? ['plinth', 'hooks', 'trust', id] : ['plinth', 'trust', 'approve', kind, id];
  const defaultHome = resolve(env.PLINTH_HOME || join(homedir(), '.plinth'));
  if (resolve(where.home) !== defaultHome) words.push('--home', where.home);
  // A workspace subject is approved in its workspace (trust.json keeps it there); `hooks trust` finds a hook in the
  // workspace it runs in, so a hook of another workspace (a request `trust list` shows from here) names that one.
  const scope = kind === 'hook' ? (workspace ?? where.workspace) : workspace;
  if (scope !== undefined && resolve(scope) !== process.cwd()) words.push('--workspace', scope);
  if (kind === 'hook' && where.profile && where.profile !== env.PLINTH_PROFILE) words.push('--profile', where.profile);
  return words.map(shellQuote).join(' ');
}

/**
 * Quotes a word for POSIX shells when it needs it; a word with control
 * characters gets bash's `$'…'` form, so that printing the command cannot
 * send escape sequences to a terminal.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  if (!new RegExp(UNPRINTABLE.source).test(word)) return `'${word.replace(/'/g, `'\\''`)}'`;
  const escaped = word.replace(/[\\']/g, (c) => `\\${c}`).replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return `$'${escaped}'`;
}

/**
 * Why a subject needs approval, for messages. `changed`: the labels of what
 * differs from what was shown at its approval (see snapshot.ts), when known.
 */
export function needText(subject: TrustSubject, state: 'pending' | 'changed', record: TrustRecord | undefined, changed: readonly string[] = []): string {
  const what = describeSubject(subject);
  if (state === 'pending') return `${what} has not been approved`;
  const since = record ? ` since it was ${record.how === 'pinned' ? 'first used' : 'approved'} on ${record.at.slice(0, 10)}` : '';
  if (changed.length > 0) return `${what} changed${since}: ${changed.map(printable).join(', ')}`;
  if (record?.shown !== undefined) return `${what} changed${since} (a hidden value: an env value or header)`;
  return `${what} changed${since} (its definition or a file it runs)`;
}

/**
 * The verdict for a subject that may not run. `why` says why nobody was asked
 * (omitted for `denied`, and by `inspect`, which never asks).
 */
export function refusal(
  subject: TrustSubject,
  fingerprint: string,
  level: 'pending' | 'changed' | 'denied',
  need: string,
  why: string | undefined,
  command: string,
): TrustVerdict {
  const reason =
    level === 'denied'
      ? `${need}, and was declined at the prompt; plinth will not ask again in this process. Approve it with: ${command}`
      : why
        ? `${need}; plinth did not ask because ${why}. Approve it with: ${command}`
        : `${need}. Approve it with: ${command}`;
  return { trusted: false, level, fingerprint, reason, approveCommand: command };
}

/**
 * The question asked on the terminal: the summary, every field shown of the
 * subject (`shown`, secrets already masked) and, for a changed one, each change.
 */
export function question(
  subject: TrustSubject,
  fingerprint: string,
  need: string,
  state: 'pending' | 'changed',
  shown: Readonly<Record<string, string>> = {},
  changeLines: readonly string[] = [],
): string {
  const lines = [`Allow ${describeSubject(subject)} to run?`];
  if (state === 'changed') {
    lines.push(`  ${need}.`);
    if (changeLines.length > 0) {
      lines.push('  What changed:');
      for (const change of changeLines) lines.push(`    ${printable(change)}`);
    }
  }
  for (const line of subject.summary.split('\n')) if (line.trim() !== '') lines.push(`  ${printable(line)}`);
  lines.push(...shownLines(shown, '    '));
  lines.push(`  source: ${subject.source}, fingerprint: ${shortFingerprint(fingerprint)}`);
  lines.push('[y]es / [N]o: ');
  return lines.join('\n');
}

/** `label: value` lines, control characters escaped. */
export function shownLines(shown: Readonly<Record<string, string>>, indent: string): string[] {
  return Object.entries(shown).map(([label, value]) => `${indent}${printable(label)}: ${printable(value)}`);
}
