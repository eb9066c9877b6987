/**
 * Plain-text output helpers for commands, so every table in plinth reads the
 * same, and so that nothing a server, a hook or a plugin sent can drive the
 * terminal: every string plinth prints passes through {@link safeText} (the
 * CLI's output and the log do it at the boundary), every table cell through
 * {@link safeLine}, every JSON document through {@link safeJson}.
 */
import { describeCause, isPlinthError } from './errors.js';

/**
 * What a terminal would act on instead of showing: C0 controls (ESC, BEL, BS,
 * CR, …), DEL, C1 controls (U+0080–U+009F: U+009B is CSI on its own), and the
 * bidirectional overrides and isolates that reorder what is shown (the
 * "Trojan Source" characters). Newline and tab are text: see {@link safeText}.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, with newline and tab. */
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `\x1b` for ESC, `\x9b` for CSI, `\u202e` for RLO: the character named, as text a person can read. */
function visible(char: string): string {
  const code = char.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every character a terminal would act on shown as an escape
 * (`"x\u001b[31mred"` prints as `x\x1b[31mred`, uncoloured); newlines and tabs
 * are kept (and CRLF becomes LF). Idempotent. For anything that came from a server, a hook or a
 * plugin, before it reaches a terminal.
 */
export function safeText(text: string): string {
  // A CR before a newline moves nothing a person sees: Windows line ends stay plain.
  return text.replace(/\r\n/g, '\n').replace(UNSAFE, visible);
}

/** {@link safeText} for one line: newlines and tabs shown as `\x0a` and `\x09` too (a table cell, a name). */
export function safeLine(text: string): string {
  return text.replace(UNSAFE_IN_LINE, visible);
}


/** What `JSON.stringify` leaves raw that a terminal acts on. */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g;

/**
 * JSON text (from `JSON.stringify`) with the characters it leaves raw and a
 * terminal acts on (DEL, C1, bidirectional controls, U+2028/9) written as
 * `\uXXXX` escapes: the same document for a parser, nothing for a terminal to
 * act on. (`JSON.stringify` already escapes U+0000–U+001F.)
 */
export function safeJson(json: string): string {
  return json.replace(RAW_IN_JSON, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/** A table: a header row and rows, columns padded to their widest cell, two spaces apart; each cell one safe line. */
export function formatTable(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const safeRows = rows.map((r) => r.map((cell) => safeLine(cell ?? '')));
  const widths = head.map((h, i) => Math.max(h.length, ...safeRows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), ...safeRows.map(line)].join('\n');
}

/**
 * An error as a person reads it: code and message, the coded errors it wraps
 * (`because:` lines), then the plugin, hook and fix. Not made safe for a
 * terminal nor redacted: print it through a command's `out`, which does both.
 */
export function formatError(error: unknown): string {
  if (!isPlinthError(error)) return `plinth: ${describeCause(error)}`;
  const lines = [`plinth: ${error.code}: ${error.message}`];
  // What it wraps, so a failure the log would have reported is here, once, with its code.
  for (let cause = error.cause, depth = 0; isPlinthError(cause) && depth < 3; cause = cause.cause, depth++) {
    if (!error.message.includes(cause.message)) lines.push(`  because: ${cause.code}: ${cause.message}`);
  }
  if (error.plugin) lines.push(`  plugin: ${error.plugin}${error.hook ? ` (in ${error.hook})` : ''}`);
  if (error.hint) lines.push(`  fix: ${error.hint}`);
  return lines.join('\n');
}
