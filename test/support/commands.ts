/** Runs a plugin's CLI command in process, as `plinth <command>` would, and keeps what it printed. */
import type { Kernel } from '../../kernel/kernel.js';
import type { CommandOutput } from '../../sdk/commands.js';

/** What a command did: its exit code, what it printed (notes included) and its `--json` document. */
export interface CommandResult {
  readonly code: number | void;
  readonly text: string;
  readonly json: Record<string, unknown> | undefined;
}

/** Runs `name` (e.g. `trust approve`) of `plugin` with `args`; throws when the plugin has no such command. */
export async function runCommand(kernel: Pick<Kernel, 'commands'>, plugin: string, name: string, args: string[] = [], json = false): Promise<CommandResult> {
  const printed: string[] = [];
  const data: unknown[] = [];
  const out: CommandOutput = { print: (t) => void printed.push(t), json: (v) => void data.push(v), note: (t) => void printed.push(t) };
  const spec = (await kernel.commands(plugin)).get(name);
  if (!spec) throw new Error(`plugin "${plugin}" has no command "${name}"`);
  const code = await spec.run({ args, options: {}, json, out, signal: new AbortController().signal });
  return { code, text: printed.join('\n'), json: data[0] as Record<string, unknown> | undefined };
}
