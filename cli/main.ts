/**
 * The command line: global options, then a command. `up` is the kernel's own;
 * every other command is declared in a plugin's manifest (so `--help` needs no
 * plugin code) and registered through the kernel's `commands` hook.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { EXIT, type CommandSpec } from '../sdk/commands.js';
import { PlinthError, isPlinthError } from '../sdk/errors.js';
import { safeText } from '../sdk/format.js';
import { closestName } from '../internal/text/suggest.js';
import { type Kernel, createKernel } from '../kernel/kernel.js';
import { parseLogLevel } from '../internal/terminal/log.js';
import { packageVersion } from '../kernel/paths.js';
import { groupCommands, groupHelpText } from './group-help.js';
import { helpKey, mayBeHelp, ownInputs, writeHelp } from './help-cache.js';
import { startReadRecording, stopReadRecording } from '../internal/fs/read-paths.js';
import { createOutput, formatError, printError, processStreams, reserveStdout, type Streams } from './output.js';
import { ProblemLog } from './problems.js';
import { REGISTRY_COMMANDS, registryCommand } from './registry.js';
import { SERVE_SUMMARY, SERVE_USAGE, serveCommand } from './serve.js';
import { upCommand } from './up.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const GLOBAL_OPTIONS = {
  profile: { type: 'string', description: 'Overlay a settings profile (env PLINTH_PROFILE)', value: '<name>' },
  home: { type: 'string', description: 'User folder (env PLINTH_HOME, default ~/.plinth)', value: '<dir>' },
  workspace: { type: 'string', description: 'Project folder whose .plinth/ holds settings and plugins (default: current directory)', value: '<dir>' },
  'plugin-dir': { type: 'string', multiple: true, description: 'Also load plugins from <dir>; repeatable', value: '<dir>' },
  json: { type: 'boolean', description: 'Print one JSON document, for scripts' },
  verbose: { type: 'boolean', short: 'v', description: 'Log what the kernel does (or set PLINTH_LOG=debug|info|warn|error)' },
  help: { type: 'boolean', short: 'h', description: 'Show help; `plinth <command> --help` for one command' },
  version: { type: 'boolean', short: 'V', description: 'Print the version' },
} as const satisfies Record<string, Options[string] & { description: string; value?: string }>;

/** A command ready to run, from the kernel or from a plugin. */
interface Resolved {
  readonly name: string;
  readonly summary: string;
  readonly usage?: string;
  /** The plugin that declares it; undefined for the kernel's own. */
  readonly plugin?: string;
  /** Set up only its plugin, not every plugin (see `standalone` in the manifest's commands). */
  readonly standalone?: true;
  /** Boot with only its plugin, its dependencies and the guards set up (see `boot` in the manifest's commands). */
  readonly boot?: 'own';
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[], given: Streams = processStreams): Promise<number> {
  const first = parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, strict: false, allowPositionals: true });
  const globals = first.values;
  // With --json stdout carries one document: a plugin that prints must not break it. (`serve --stdio` keeps stdout for MCP itself.)
  const servesStdio = first.positionals[0] === 'serve' && globals.stdio === true;
  const reserved = globals.json === true && given === processStreams && !servesStdio ? reserveStdout() : undefined;
  // A help answer of the real process streams is kept for the next identical call (cli/help-cache.ts), with what it was made from.
  const keep = given === processStreams && reserved === undefined && mayBeHelp(argv) ? new HelpRecording(argv, given) : undefined;
  const streams = keep?.streams ?? reserved?.streams ?? given;
  const logLevel = globals.verbose === true ? 'debug' : parseLogLevel(process.env.PLINTH_LOG, 'warn');
  // With the log at its default, a failure the command reports itself is not also printed by the log.
  const problems = new ProblemLog(streams.stderr, { holdBack: logLevel === 'warn' || logLevel === 'error' });
  const kernel = createKernel({
    ...(typeof globals.home === 'string' && { home: globals.home }),
    ...(typeof globals.workspace === 'string' && { workspace: globals.workspace }),
    ...(typeof globals.profile === 'string' && { profile: globals.profile }),
    pluginDirs: (globals['plugin-dir'] as string[] | undefined) ?? [],
    ...(globals.verbose === true && { logLevel: 'debug' as const }),
    logSink: problems.sink,
  });
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      // A closed terminal can hang up more than once (the kernel, then the shell
      // passing it on to its jobs): only a person pressing Ctrl-C again, or a
      // second SIGTERM, cuts shutdown short and may leave children behind.
      if (signal === 'SIGHUP') return;
      streams.stderr(`plinth: ${signal} again, exiting now\n`);
      process.exit(EXIT.INTERRUPTED);
    }
    controller.abort(signal);
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);
  let code: number | undefined;
  try {
    code = await dispatch(argv, first, kernel, controller.signal, problems.guard(streams), problems, keep);
    return code;
  } finally {
    problems.live();
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal);
    reserved?.restore();
    if (keep !== undefined) await keep.end(code);
  }
}

/**
 * A call that may print the command table: the paths read meanwhile, what it
 * prints, whether it printed to stderr, and whether its answer was the table.
 */
class HelpRecording {
  readonly #key: string;
  readonly #started = Date.now();
  readonly #reads = startReadRecording();
  #stdout = '';
  #stderr = false;
  #answered = false;
  readonly #warned = () => (this.#stderr = true);
  readonly streams: Streams;

  constructor(argv: readonly string[], given: Streams) {
    this.#key = helpKey(argv);
    // Node prints a process warning to stderr itself.
    process.on('warning', this.#warned);
    this.streams = {
      stdout: (text) => {
        // What processStreams writes (control characters shown, not sent): the kept answer is printed as it is.
        this.#stdout += safeText(text);
        given.stdout(text);
      },
      stderr: (text) => {
        this.#stderr = true;
        given.stderr(text);
      },
    };
  }

  /** The command table (top level or a group's) was the answer. */
  answered(): void {
    this.#answered = true;
  }

  async end(code: number | undefined): Promise<void> {
    stopReadRecording();
    process.off('warning', this.#warned);
    if (!this.#answered || this.#stderr || code === undefined) return;
    await writeHelp(this.#key, [...this.#reads, ...ownInputs()], { stdout: this.#stdout, code }, undefined, this.#started);
  }
}

/**
 * Signals that end plinth through a clean shutdown (teardowns, every MCP
 * server's process group). SIGHUP is the everyday one: the terminal was closed.
 */
const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const satisfies readonly NodeJS.Signals[];

async function dispatch(
  argv: readonly string[],
  first: { values: Record<string, unknown>; positionals: string[] },
  kernel: Kernel,
  signal: AbortSignal,
  streams: Streams,
  problems: ProblemLog,
  keep?: HelpRecording,
): Promise<number> {
  const globals = first.values;
  const json = globals.json === true;
  const fail = (error: unknown): void => {
    // Held log lines that this error shows (itself or a cause) are not printed again, also with --json.
    problems.before(kernel.redactor.text(formatError(error)));
    printError(error, json, streams, kernel.redactor);
  };
  try {
    await kernel.prepare();
  } catch (error) {
    fail(error);
    return isPlinthError(error) && /^PLN_E_(CONFIG|PROFILE)_/.test(error.code) ? EXIT.CONFIG : EXIT.FAILURE;
  }

  const commands = knownCommands(kernel);
  const words = first.positionals;
  const command = findCommand(commands, words);
  if (!command) {
    if (words.length === 0) {
      if (globals.help !== true) {
        try {
          parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, strict: true, allowPositionals: true });
        } catch (error) {
          fail(usageError(error, 'plinth --help'));
          return EXIT.USAGE;
        }
      }
      streams.stdout(`${helpText(commands)}\n`);
      keep?.answered();
      return globals.help === true ? EXIT.OK : EXIT.USAGE;
    }
    // A group's name alone (`plinth mcp`, `plinth mcp --help`): its commands.
    const group = groupCommands(commands, words);
    if (group.length > 0) {
      streams.stdout(`${groupHelpText(words.join(' '), group)}\n`);
      keep?.answered();
      return globals.help === true ? EXIT.OK : EXIT.USAGE;
    }
    const error = unknownCommand(words, commands);
    fail(error);
    return EXIT.USAGE;
  }

  const out = createOutput(streams, kernel.redactor);
  try {
    const spec = command.plugin === undefined ? await hostCommand(kernel, command, problems) : await pluginCommand(kernel, command, globals.help === true);
    if (globals.help === true) {
      streams.stdout(`${commandHelp(command, spec)}\n`);
      return EXIT.OK;
    }
    const parsed = parseCommandLine(argv, command, spec);
    const code = await spec.run({ args: parsed.args, options: parsed.options, json, out, signal });
    return code ?? EXIT.OK;
  } catch (error) {
    fail(error);
    return isPlinthError(error) && error.code === 'PLN_E_CLI_USAGE' ? EXIT.USAGE : EXIT.FAILURE;
  } finally {
    const report = await kernel.shutdown();
    for (const error of report.errors) streams.stderr(`plinth: warning: ${kernel.redactor.text(`${error.code}: ${error.message}`)}\n`);
  }
}

function knownCommands(kernel: Kernel): Resolved[] {
  return [{ name: 'up', summary: UP_SUMMARY, usage: 'up [--once]' }, { name: 'serve', summary: SERVE_SUMMARY, usage: SERVE_USAGE }, ...REGISTRY_COMMANDS, ...kernel.declaredCommands()];
}

/** The CLI's own commands: `up`, `serve`, and the registry's publisher tools (loaded only when one runs). */
async function hostCommand(kernel: Kernel, command: Resolved, problems: ProblemLog): Promise<CommandSpec> {
  if (command.name === 'up') return upCommand(kernel, problems);
  if (command.name === 'serve') return serveCommand(kernel, problems);
  const spec = await registryCommand(command.name);
  if (!spec) throw new PlinthError('PLN_E_CLI_UNKNOWN_COMMAND', `unknown command "${command.name}"`, { hint: 'run `plinth --help` for the list of commands' });
  return spec;
}

const UP_SUMMARY = 'Boot every plugin, print their status and stay up until Ctrl-C (--once: print and exit)';

/** The longest run of leading words that names a command. */
function findCommand(commands: readonly Resolved[], words: readonly string[]): Resolved | undefined {
  for (let n = Math.min(words.length, 4); n > 0; n--) {
    const name = words.slice(0, n).join(' ');
    const found = commands.find((c) => c.name === name);
    if (found) return found;
  }
  return undefined;
}

/**
 * The command's spec, registered by its plugin, after the boot the command needs. For `--help` only (nothing runs),
 * the boot of its own plugin: its arguments and options are what its plugin registers; the guards are set up still.
 */
async function pluginCommand(kernel: Kernel, command: Resolved, helpOnly: boolean): Promise<CommandSpec> {
  if (command.standalone !== true) await kernel.boot((command.boot === 'own' || helpOnly) && command.plugin ? { only: [command.plugin] } : {});
  let registered;
  try {
    registered = await kernel.commands(command.plugin);
  } catch (cause) {
    // The cause is printed with this error (formatError), so the fix it names comes first.
    throw new PlinthError('PLN_E_COMMAND_UNAVAILABLE', `"${command.name}" is unavailable: plugin "${command.plugin}" did not load`, {
      ...(command.plugin && { plugin: command.plugin }),
      cause,
      hint: isPlinthError(cause) && cause.hint ? cause.hint : `\`plinth plugins why ${command.plugin}\` explains why`,
    });
  }
  const spec = registered.get(command.name);
  if (!spec) {
    throw new PlinthError('PLN_E_COMMAND_UNAVAILABLE', `plugin "${command.plugin}" declares "${command.name}" but did not register it`, {
      ...(command.plugin && { plugin: command.plugin }),
      hint: 'the plugin must add the command through kernel.hooks.commands in its setup',
    });
  }
  return spec;
}

function parseCommandLine(argv: readonly string[], command: Resolved, spec: CommandSpec) {
  const options: Options = { ...GLOBAL_OPTIONS };
  for (const [name, option] of Object.entries(spec.options ?? {})) {
    options[name] = { type: option.type, ...(option.short && { short: option.short }), ...(option.multiple && { multiple: true }) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw usageError(error, `plinth ${command.name} --help`);
  }
  const args = parsed.positionals.slice(command.name.split(' ').length);
  const expected = spec.args ?? [];
  const missing = expected.filter((a, i) => a.required && args[i] === undefined);
  if (missing.length > 0) {
    throw new PlinthError('PLN_E_CLI_USAGE', `"${command.name}" needs ${missing.map((a) => `<${a.name}>`).join(' ')}`, {
      hint: `usage: plinth ${usageLine(command, spec)}`,
    });
  }
  if (args.length > expected.length && expected.at(-1)?.variadic !== true) {
    throw new PlinthError('PLN_E_CLI_USAGE', `"${command.name}" takes ${expected.length} argument(s), got ${args.length}: ${args.join(' ')}`, {
      hint: `usage: plinth ${usageLine(command, spec)}`,
    });
  }
  return { args, options: parsed.values as Record<string, string | boolean | string[] | undefined> };
}

/** node:util's parse error, as a coded usage error. */
function usageError(error: unknown, help: string): PlinthError {
  return new PlinthError('PLN_E_CLI_USAGE', `${(error as Error).message.split('\n')[0]}`, { hint: `see \`${help}\`` });
}

/**
 * Names only the words that are unknown: `plinth hello world` without a `hello` command is
 * unknown command "hello" (world would be its argument); `plinth mcp nope` is "mcp nope". A
 * word a typo away from a command's is suggested.
 */
function unknownCommand(words: readonly string[], commands: readonly Resolved[]): PlinthError {
  const first = words[0] ?? '';
  const inGroup = commands.filter((c) => c.name.split(' ')[0] === first && c.name.includes(' '));
  const unknown = inGroup.length > 0 && words.length > 1 ? `${first} ${words[1]}` : first;
  let hint = 'run `plinth --help` for the list of commands';
  if (inGroup.length > 0 && words.length > 1) {
    const near = closestName(unknown, inGroup.map((c) => c.name));
    hint = near ? `did you mean "${near}"?` : `\`plinth ${first}\` lists its commands: ${inGroup.map((c) => c.name.split(' ')[1]).join(', ')}`;
  } else {
    const near = closestName(first, new Set(commands.map((c) => c.name.split(' ')[0]!)));
    if (near) hint = `did you mean "${near}"? (\`plinth --help\` lists every command)`;
  }
  return new PlinthError('PLN_E_CLI_UNKNOWN_COMMAND', `unknown command "${unknown}"`, { hint });
}

function usageLine(command: Resolved, spec: CommandSpec): string {
  if (command.usage) return command.usage;
  const args = (spec.args ?? []).map((a) => {
    const name = a.variadic ? `${a.name}...` : a.name;
    return a.required ? `<${name}>` : `[${name}]`;
  });
  return [command.name, ...args, ...(spec.options && Object.keys(spec.options).length > 0 ? ['[options]'] : [])].join(' ');
}

function optionLines(options: Readonly<Record<string, { type: string; short?: string; description: string; value?: string }>>): string[] {
  const rows = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` ${o.value ?? '<value>'}` : ''}`;
    return [flag, o.description] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length));
  return rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`);
}

function helpText(commands: readonly Resolved[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `plinth ${packageVersion()}: the plugin microkernel of an LLM command-line tool`,
    '',
    'Usage: plinth <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}${c.plugin ? `  (${c.plugin})` : ''}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    `Exit codes: ${EXIT.OK} ok, ${EXIT.FAILURE} failed, ${EXIT.USAGE} usage, ${EXIT.CONFIG} invalid settings, ${EXIT.PLUGINS} some plugins did not load, ${EXIT.BLOCKED} event blocked, ${EXIT.INTERRUPTED} interrupted twice`,
  ].join('\n');
}

function commandHelp(command: Resolved, spec: CommandSpec): string {
  const lines = [`Usage: plinth ${usageLine(command, spec)}`, '', command.summary];
  if (command.plugin) lines.push(`From plugin: ${command.plugin}`);
  if (spec.args && spec.args.length > 0) {
    lines.push('', 'Arguments:', ...spec.args.map((a) => `  ${a.name}${a.description ? `  ${a.description}` : ''}`));
  }
  if (spec.options && Object.keys(spec.options).length > 0) lines.push('', 'Options:', ...optionLines(spec.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  return lines.join('\n');
}
