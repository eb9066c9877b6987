/**
 * What the SDK is asked to spawn for a server: the environment (the resolved
 * `env` over the SDK's safe base), and the program, started through `setsid`
 * where that gives it a process group of its own. Also the checks that turn a
 * spawn failure into a message a person can act on (with `setsid` in front, a
 * missing program would otherwise show up only as exit code 127).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { PlinthError } from 'plinth/sdk';
import type { McpServerDefinition, TransportContext } from 'plinth/sdk';
import { findSetsid } from './process-tree.js';

const PLUGIN = 'transport-stdio';

/** The SDK's `StdioServerParameters`, as this plugin fills them. */
export interface LaunchPlan {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  /** True when `command` is `setsid` and the server will lead its own process group. */
  readonly grouped: boolean;
}

/**
 * @param baseEnv the SDK's `getDefaultEnvironment()` (HOME, PATH, … only; never plinth's whole environment).
 * @param processGroup the `processGroup` setting.
 */
export function launchPlan(server: McpServerDefinition, baseEnv: Record<string, string>, processGroup: boolean): LaunchPlan {
  const command = server.command!;
  const env = { ...baseEnv, ...server.env };
  const setsid = processGroup ? findSetsid() : undefined;
  if (setsid === undefined) return { command, args: [...server.args], env, cwd: server.cwd, grouped: false };
  return { command: setsid, args: ['--', command, ...server.args], env, cwd: server.cwd, grouped: true };
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (process.platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `command` would be found, as `execvp` looks: a path (relative to `cwd`)
 * when it has a slash, otherwise the first executable match on `PATH`.
 */
export function findProgram(command: string, cwd: string, path: string | undefined): string | undefined {
  if (command.includes('/') || (process.platform === 'win32' && command.includes('\\'))) {
    const full = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(full) ? full : undefined;
  }
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const full = join(isAbsolute(dir) ? dir : resolve(cwd, dir), command);
    if (isExecutableFile(full)) return full;
  }
  return undefined;
}

/** Throws `PLN_E_MCP_STDIO_SPAWN` when the server cannot be started as planned; checked before spawning. */
export function checkLaunch(server: McpServerDefinition, plan: LaunchPlan, context: TransportContext): void {
  const fail = (problem: string, hint: string): never => {
    throw new PlinthError('PLN_E_MCP_STDIO_SPAWN', context.redact(`MCP server "${server.name}" cannot be started: ${problem}`), { plugin: PLUGIN, hint, details: { server: server.name } });
  };
  let cwdIsDir = false;
  try {
    cwdIsDir = statSync(plan.cwd).isDirectory();
  } catch {
    /* missing */
  }
  if (!cwdIsDir) fail(`its working directory ${plan.cwd} does not exist`, 'Fix "cwd" in its mcpServers entry (relative paths are resolved from the file that defines it)');
  // Without setsid the SDK's own spawn reports a missing program (ENOENT), and on Windows PATHEXT applies.
  if (plan.grouped && findProgram(server.command!, plan.cwd, plan.env.PATH) === undefined) {
    fail(`"${server.command}" is not an executable file, nor found on PATH`, 'Install the program, or give its full path in "command"');
  }
}

/** Wraps an error of the SDK's spawn (ENOENT, EACCES, …) as `PLN_E_MCP_STDIO_SPAWN`. */
export function spawnError(server: McpServerDefinition, cause: unknown, context: TransportContext): PlinthError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new PlinthError('PLN_E_MCP_STDIO_SPAWN', context.redact(`MCP server "${server.name}" cannot be started: ${reason}`), {
    plugin: PLUGIN,
    hint: 'Check "command", "args" and "cwd" in its mcpServers entry',
    cause,
    details: { server: server.name },
  });
}
