/**
 * The generic fail-closed rule for plugins that guard events. A plugin lists in
 * its manifest's `guards` the events it guards (usually the gate events); while
 * it is not running — import, setup or settings failed, setup timed out, a
 * dependency did not load, the resolver left it out — each of those events is
 * blocked in its name, with its error and the fix.
 *
 * The kernel does not ask whether the plugin had anything to guard (for the
 * hooks plugin: whether hooks of that event are configured): only the plugin
 * knows, and it is the one that could not run. A wrong block is loud and names
 * its fix; a wrong allow would be silent.
 */
import { canonicalEvent } from '../sdk/events.js';
import type { Disposer, PluginInfo, PluginState } from '../sdk/plugin.js';
import type { PlinthError } from '../sdk/errors.js';
import type { EventBus } from './events.js';

/** Before every other handler: nothing acts on an event that is going to be blocked anyway. */
const FIRST = Number.MIN_SAFE_INTEGER;

/**
 * Blocks the events `plugin` guards, for as long as the returned disposer is not
 * called; undefined when it guards none. `error` is why it is not running
 * (already redacted): its code and message are the reason, its hint the fix.
 */
export function blockGuardedEvents(bus: EventBus, plugin: Pick<PluginInfo, 'name' | 'manifest'>, state: PluginState, error: PlinthError): Disposer | undefined {
  const { name, manifest } = plugin;
  const events = new Set(manifest.guards.map((event) => canonicalEvent(event)).filter((event) => event !== undefined));
  if (events.size === 0) return undefined;
  const fix = [
    error.hint ?? `\`plinth plugins why ${name}\` explains why it did not load`,
    `to go on without it, disable it in your user settings (plugins.${name}.enabled: false)`,
  ].join('; ');
  const offs = [...events].map((event) =>
    bus.on(
      name,
      event,
      () => ({
        allow: false,
        message: `plugin "${name}" guards ${event} and is not running (${state}: ${error.code}: ${error.message}); ${event} is blocked until it runs. Fix: ${fix}`,
        code: 'PLN_E_GUARD_UNAVAILABLE',
        fix,
      }),
      { stage: FIRST },
    ),
  );
  return () => {
    for (const off of offs) off();
  };
}
