/**
 * An elicitation form on the terminal: the server's message, then one
 * question per field of the requested schema, with the schema's default in
 * brackets (Enter keeps it), choices numbered, and each answer checked
 * against the field's type, range, length and format before the next
 * question. `!decline` and `!cancel` answer the whole request; end of input,
 * Ctrl-C or the server cancelling the request cancel it.
 *
 * One form at a time: requests from several servers wait for each other.
 */
import { createInterface } from 'node:readline';
import { safeText } from 'plinth/sdk';
import type { ElicitationContent } from 'plinth/sdk';
import type { Terminal } from './types.js';

/** What the form answers: the MCP `ElicitResult`. */
// A type, not an interface: the SDK's ElicitResult has an index signature, which only a type alias satisfies.
export type ElicitAnswer = {
  action: 'accept' | 'decline' | 'cancel';
  content?: ElicitationContent;
};

/** One field of a form-mode requested schema (primitives and multi-select enums only, per the spec). */
interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  enumNames?: unknown[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  anyOf?: Array<{ const?: unknown; title?: string }>;
  items?: FieldSchema;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
}

type Value = string | number | boolean | string[];
type Parsed = { value: Value } | { problem: string };

let queue: Promise<unknown> = Promise.resolve();

/** Asks the form on `terminal` once every earlier form is answered. */
export function askElicitation(
  request: { server: string; message: string; requestedSchema: Record<string, unknown> },
  terminal: Terminal,
  signal?: AbortSignal,
): Promise<ElicitAnswer> {
  const run = queue.then(() => askNow(request, terminal, signal));
  queue = run.catch(() => undefined);
  return run;
}

async function askNow(request: { server: string; message: string; requestedSchema: Record<string, unknown> }, terminal: Terminal, signal?: AbortSignal): Promise<ElicitAnswer> {
  if (signal?.aborted) return { action: 'cancel' };
  const { input, output } = terminal;
  const rl = createInterface({ input, output, terminal: Boolean(input.isTTY && output.isTTY) });
  // The message, titles, descriptions, choices and defaults all come from the server.
  const say = (text: string): void => void output.write(safeText(text));
  let interrupted = false;
  rl.on('SIGINT', () => {
    interrupted = true;
    say('^C\n');
    rl.close();
  });
  const onAbort = () => rl.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  // The iterator buffers lines that arrive before the question (pasted or piped answers).
  const lines = rl[Symbol.asyncIterator]();
  const next = async (prompt: string): Promise<string | undefined> => {
    say(prompt);
    const line = await lines.next();
    return line.done ? undefined : line.value;
  };

  try {
    const properties = (request.requestedSchema.properties ?? {}) as Record<string, FieldSchema>;
    const required = new Set(Array.isArray(request.requestedSchema.required) ? (request.requestedSchema.required as string[]) : []);
    say(`\nserver "${request.server}" asks: ${request.message}\n(Enter keeps the value in brackets; !decline declines, !cancel cancels)\n`);
    const content: Record<string, Value> = {};
    for (const [key, field] of Object.entries(properties)) {
      const choices = choicesOf(field);
      say(`\n${field.title ?? key}${required.has(key) ? ' (required)' : ''}${field.description ? `: ${field.description}` : ''}\n`);
      if (choices) say(choices.map((c, i) => `  ${i + 1}) ${c.label}`).join('\n') + '\n');
      for (;;) {
        const answer = await next(`  ${key}${hint(field, choices)}${field.default !== undefined ? ` [${show(field.default)}]` : ''}: `);
        if (answer === undefined) return { action: 'cancel' };
        const text = answer.trim();
        if (text === '!decline') return { action: 'decline' };
        if (text === '!cancel') return { action: 'cancel' };
        if (text === '') {
          if (field.default !== undefined) {
            content[key] = field.default as Value;
            break;
          }
          if (!required.has(key)) break;
          say('  an answer is required\n');
          continue;
        }
        const parsed = parse(field, text, choices);
        if ('value' in parsed) {
          content[key] = parsed.value;
          break;
        }
        say(`  ${parsed.problem}\n`);
      }
    }
    return { action: 'accept', content };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    rl.close();
    // Ctrl-C belongs to the host too: pass it on once the form is out of the way.
    if (interrupted) setImmediate(() => process.kill(process.pid, 'SIGINT'));
  }
}

interface Choice {
  readonly value: string;
  readonly label: string;
}

/** The choices of an enum field (or of a multi-select field's items), numbered for answering by number. */
function choicesOf(field: FieldSchema): Choice[] | undefined {
  const source = field.type === 'array' ? field.items : field;
  if (!source) return undefined;
  if (Array.isArray(source.enum)) {
    return source.enum.map((v, i) => {
      const name = source.enumNames?.[i];
      return { value: String(v), label: typeof name === 'string' ? `${name} (${String(v)})` : String(v) };
    });
  }
  const options = source.oneOf ?? source.anyOf;
  if (Array.isArray(options) && options.every((o) => o && o.const !== undefined)) {
    return options.map((o) => ({ value: String(o.const), label: o.title ? `${o.title} (${String(o.const)})` : String(o.const) }));
  }
  return undefined;
}

function hint(field: FieldSchema, choices: Choice[] | undefined): string {
  if (field.type === 'boolean') return ' (y/n)';
  if (field.type === 'array') return ' (numbers or values, comma-separated)';
  if (choices) return ' (number or value)';
  if (field.type === 'integer' || field.type === 'number') {
    const range = field.minimum !== undefined || field.maximum !== undefined ? ` ${field.minimum ?? '…'}–${field.maximum ?? '…'}` : '';
    return ` (${field.type}${range})`;
  }
  return field.format ? ` (${field.format})` : '';
}

function parse(field: FieldSchema, text: string, choices: Choice[] | undefined): Parsed {
  switch (field.type) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return { value: true };
      if (/^(n|no|false)$/i.test(text)) return { value: false };
      return { problem: 'answer y or n' };
    case 'integer':
    case 'number': {
      const value = choices ? Number(pick(text, choices)) : Number(text);
      if (!Number.isFinite(value)) return { problem: `not a number: ${text}` };
      if (field.type === 'integer' && !Number.isInteger(value)) return { problem: 'a whole number is needed' };
      if (field.minimum !== undefined && value < field.minimum) return { problem: `at least ${field.minimum}` };
      if (field.maximum !== undefined && value > field.maximum) return { problem: `at most ${field.maximum}` };
      return { value };
    }
    case 'array': {
      const picked: string[] = [];
      for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
        const choice = pick(part, choices);
        if (choice === undefined) return { problem: `not one of the choices: ${part}` };
        if (!picked.includes(choice)) picked.push(choice);
      }
      if (field.minItems !== undefined && picked.length < field.minItems) return { problem: `choose at least ${field.minItems}` };
      if (field.maxItems !== undefined && picked.length > field.maxItems) return { problem: `choose at most ${field.maxItems}` };
      return { value: picked };
    }
    default:
      return parseString(field, text, choices);
  }
}

function parseString(field: FieldSchema, text: string, choices: Choice[] | undefined): Parsed {
  if (choices) {
    const choice = pick(text, choices);
    return choice === undefined ? { problem: `choose one of 1–${choices.length}` } : { value: choice };
  }
  if (field.minLength !== undefined && text.length < field.minLength) return { problem: `at least ${field.minLength} characters` };
  if (field.maxLength !== undefined && text.length > field.maxLength) return { problem: `at most ${field.maxLength} characters` };
  if (field.pattern !== undefined) {
    try {
      if (!new RegExp(field.pattern, 'u').test(text)) return { problem: `does not match ${field.pattern}` };
    } catch {
      // A pattern JavaScript cannot compile: the server checks it.
    }
  }
  const formatProblem = checkFormat(field.format, text);
  return formatProblem ? { problem: formatProblem } : { value: text };
}

/** The formats the spec allows in forms: email, uri, date, date-time. */
function checkFormat(format: string | undefined, text: string): string | undefined {
  switch (format) {
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) ? undefined : 'not an email address';
    case 'uri':
      return URL.canParse(text) ? undefined : 'not a URI (e.g. https://example.com)';
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)) ? undefined : 'not a date (YYYY-MM-DD)';
    case 'date-time':
      return /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text)) ? undefined : 'not a date and time (YYYY-MM-DDTHH:MM:SSZ)';
    default:
      return undefined;
  }
}

/** A choice by its number or its value. */
function pick(text: string, choices: Choice[] | undefined): string | undefined {
  if (!choices) return undefined;
  if (/^\d+$/.test(text)) {
    const byNumber = choices[Number(text) - 1];
    if (byNumber) return byNumber.value;
  }
  return choices.find((c) => c.value === text || c.value.toLowerCase() === text.toLowerCase())?.value;
}

function show(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join(', ') : String(value);
}
