/**
 * Plain-text logging to stderr. Every line passes through the redactor, so a
 * sensitive setting's value cannot reach a log however a plugin formats it,
 * and through `safeText`, so an escape sequence a server sent cannot reach the terminal.
 */
import { safeText } from '../../sdk/format.js';
import type { Logger } from '../../sdk/plugin.js';
import { writeStandard } from './std-streams.js';

/** How much the kernel logs (`PLINTH_LOG`, `KernelOptions.logLevel`): from everything (`debug`) to nothing (`silent`). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Where finished log lines go instead of stderr (`KernelOptions.logSink`): a host's own log, a test's array. Lines arrive redacted. */
export interface LogSink {
  (line: string): void;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Receives finished lines; default writes to stderr. */
  sink?: LogSink;
  /** Applied to every finished line. */
  redact?: (text: string) => string;
}

/** Parses `PLINTH_LOG`; unknown values fall back to `fallback`. */
export function parseLogLevel(value: string | undefined, fallback: LogLevel): LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value ?? '') ? (value as LogLevel) : fallback;
}

/** A logger whose lines read `plinth[scope] level: message {data}`. */
export function createLogger(scope: string, options: LoggerOptions): Logger & { child(scope: string): Logger } {
  const threshold = RANK[options.level];
  const sink = options.sink ?? ((line: string) => writeStandard(process.stderr, `${line}\n`));
  const redact = options.redact ?? ((text: string) => text);
  const write = (level: Exclude<LogLevel, 'silent'>, message: string, data?: Record<string, unknown>): void => {
    if (RANK[level] < threshold) return;
    const tail = data === undefined ? '' : ` ${safeJson(data)}`;
    // Messages quote servers, hooks and plugins: what a terminal would act on is shown instead.
    sink(safeText(redact(`plinth[${scope}] ${level}: ${message}${tail}`)));
  };
  return {
    debug: (message, data) => write('debug', message, data),
    info: (message, data) => write('info', message, data),
    warn: (message, data) => write('warn', message, data),
    error: (message, data) => write('error', message, data),
    child: (child) => createLogger(child, options),
  };
}

function safeJson(data: Record<string, unknown>): string {
  try {
    return JSON.stringify(data, (_key, value: unknown) =>
      value instanceof Error ? { name: value.name, message: value.message } : value,
    );
  } catch {
    return '[unserialisable]';
  }
}
