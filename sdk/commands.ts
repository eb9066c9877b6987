/** CLI commands that plugins contribute through the kernel's `commands` hook. */

/** One option of a command, in `node:util` parseArgs terms. */
export interface CommandOption {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  description: string;
  /** How the help shows a string option's value, e.g. `<name>` (default `<value>`). */
  value?: string;
}

/** Where a command writes; everything passes through the kernel's redactor. */
export interface CommandOutput {
  /** A line (or lines) for a person, on stdout. */
  print(text: string): void;
  /** A JSON document, on stdout: what `--json` prints. */
  json(value: unknown): void;
  /** A warning or progress line, on stderr. */
  note(text: string): void;
}

/** What a command's `run` receives. */
export interface CommandInput {
  /** Positional arguments after the command's words. */
  readonly args: readonly string[];
  /** Parsed options, by long name. */
  readonly options: Readonly<Record<string, string | boolean | string[] | undefined>>;
  /** `--json` was given: print one JSON document with `out.json`. */
  readonly json: boolean;
  readonly out: CommandOutput;
  /** Aborted on SIGINT, SIGTERM or SIGHUP (the terminal closed). */
  readonly signal: AbortSignal;
}

/** A command as a plugin registers it. */
export interface CommandSpec {
  /** Words, as declared in the manifest's `commands`, e.g. `"plugins why"`. */
  name: string;
  /**
   * Positional arguments, for help and checking. `variadic` on the last one:
   * it takes every remaining word, e.g. a program and its arguments after `--`
   * (`plinth mcp add files -- npx -y server`).
   */
  args?: ReadonlyArray<{ name: string; required?: boolean; description?: string; variadic?: boolean }>;
  options?: Readonly<Record<string, CommandOption>>;
  /** Returns the exit code (0 when nothing is returned). */
  run(input: CommandInput): number | void | Promise<number | void>;
}

/** Passed to taps of the `commands` hook. */
export interface CommandRegistry {
  /** Adds a command; its name must be declared in the plugin's manifest `commands`. */
  add(command: CommandSpec): void;
}

/** Exit codes that scripts can rely on. */
export const EXIT = {
  OK: 0,
  /** The command ran and failed. */
  FAILURE: 1,
  /** The command line was wrong. */
  USAGE: 2,
  /** A settings file is invalid. */
  CONFIG: 3,
  /** Some plugins could not be loaded (the rest run). */
  PLUGINS: 4,
  /** The command fired an event and it was blocked (e.g. `plinth hooks run`). */
  BLOCKED: 5,
  /** Interrupted a second time during shutdown. */
  INTERRUPTED: 130,
} as const;
