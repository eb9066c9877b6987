/**
 * The command table the CLI builds on: the commands resolved plugins declare
 * in their manifests (no plugin code runs), and those plugins registered
 * through the `commands` hook, each with its owner.
 */
import type { CommandRegistry, CommandSpec } from '../sdk/commands.js';
import { activate } from './activation.js';
import { HOST } from './services.js';
import { type KernelState, resolutionOf } from './state.js';

/** A command a resolved plugin declares, from its manifest. */
export interface DeclaredCommand {
  readonly name: string;
  readonly summary: string;
  readonly usage?: string;
  readonly plugin: string;
  /** Runs with only its plugin set up, no boot (builtin plugins only). */
  readonly standalone?: true;
  /** Runs after a boot of its plugin, its dependencies and the guards: `boot({ only: [plugin] })`. */
  readonly boot?: 'own';
}

/** A command registered by a plugin, with its owner. */
export interface RegisteredCommand extends CommandSpec {
  readonly plugin: string;
  readonly summary: string;
}

/** Commands declared by the resolved plugins, from manifests alone. */
export function declaredCommands(state: KernelState): DeclaredCommand[] {
  const list: DeclaredCommand[] = [];
  for (const candidate of resolutionOf(state).plugins) {
    for (const [name, decl] of Object.entries(candidate.manifest.commands)) {
      // Only plinth's own commands may skip the boot: it is what sets up every guard (hooks, trust's gate) before anything runs.
      const standalone = decl.standalone === true && candidate.source === 'builtin';
      // A boot of its own plugin still sets up every guard, so any plugin may ask for it.
      const own = !standalone && decl.boot === 'own';
      list.push({ name, summary: decl.summary, ...(decl.usage && { usage: decl.usage }), plugin: candidate.manifest.name, ...(standalone && { standalone: true as const }), ...(own && { boot: 'own' as const }) });
    }
  }
  // Code-point order: localeCompare would load ICU (about 10 ms) on every CLI start.
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Activates `plugin` and collects the commands plugins registered through the `commands` hook. */
export async function commands(state: KernelState, plugin?: string): Promise<Map<string, RegisteredCommand>> {
  if (plugin) await activate(state, plugin);
  const found = new Map<string, RegisteredCommand>();
  const owners = new Map(declaredCommands(state).map((c) => [c.name, c]));
  const registry: CommandRegistry = {
    add: (command) => {
      const owner = owners.get(command.name);
      found.set(command.name, { ...command, plugin: owner?.plugin ?? HOST, summary: owner?.summary ?? '' });
    },
  };
  state.hooks.commands.call(registry);
  return found;
}
