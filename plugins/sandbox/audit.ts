/**
 * The sandbox's audit log: one JSON line per denial the sandbox can see
 * (proxy refusals, capability checks, refused launches) at
 * `$PLINTH_HOME/sandbox/audit.jsonl`. Each line is one `O_APPEND` write
 * smaller than a pipe buffer, so concurrent writers (the host, several
 * proxies) never interleave or lose lines; no lock is needed.
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PermissionKind } from 'plinth/sdk';

export interface AuditEntry {
  /** The principal: plugin name, or `settings:user` / `settings:workspace`. */
  readonly plugin: string;
  readonly permission: PermissionKind | 'launch';
  /** What was refused: a path, `host:port`, a variable name, a server name, a program. */
  readonly target: string;
  readonly reason: string;
  /** ISO time; now when omitted. */
  readonly time?: string;
}

export interface AuditFilter {
  readonly plugin?: string;
  readonly permission?: string;
  /** Only the last this many (after filtering). */
  readonly limit?: number;
}

/** Longest field kept: a line must stay one atomic append. */
const FIELD_LIMIT = 512;

export function auditFile(home: string): string {
  return join(home, 'sandbox', 'audit.jsonl');
}

function line(entry: AuditEntry): string {
  const clip = (text: string): string => (text.length > FIELD_LIMIT ? `${text.slice(0, FIELD_LIMIT)}…` : text);
  return `${JSON.stringify({ time: entry.time ?? new Date().toISOString(), plugin: clip(entry.plugin), permission: entry.permission, target: clip(entry.target), reason: clip(entry.reason) })}\n`;
}

/** Appends one entry. Never throws: an audit write that fails must not turn a refusal into a crash. */
export async function appendAudit(home: string, entry: AuditEntry): Promise<void> {
  try {
    await mkdir(join(home, 'sandbox'), { recursive: true });
    await appendFile(auditFile(home), line(entry), { flag: 'a' });
  } catch {
    /* the refusal itself still stands */
  }
}

/** The synchronous twin, for paths that cannot wait (a refusal inside a synchronous launch). */
export function appendAuditSync(home: string, entry: AuditEntry): void {
  try {
    mkdirSync(join(home, 'sandbox'), { recursive: true });
    appendFileSync(auditFile(home), line(entry), { flag: 'a' });
  } catch {
    /* as above */
  }
}

/** The entries, oldest first; a damaged line is skipped. */
export function readAudit(home: string, filter: AuditFilter = {}): Array<Required<AuditEntry>> {
  let text: string;
  try {
    text = readFileSync(auditFile(home), 'utf8');
  } catch {
    return [];
  }
  const out: Array<Required<AuditEntry>> = [];
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    try {
      const entry = JSON.parse(raw) as Required<AuditEntry>;
      if (filter.plugin !== undefined && entry.plugin !== filter.plugin) continue;
      if (filter.permission !== undefined && entry.permission !== filter.permission) continue;
      out.push(entry);
    } catch {
      /* a torn line from a crash: skipped */
    }
  }
  return filter.limit === undefined ? out : out.slice(-filter.limit);
}
