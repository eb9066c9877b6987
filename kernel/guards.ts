/**
 * The generic fail-closed rule for plugins that guard events. A plugin lists in
 * its manifest's `guards` the events it guards (usually the gate events); while
 * it is not running — import, setup or settings failed, setup timed out, a
 * dependency did not load, the resolver left it out — each of those events is
 * blocked in its name, with its error and the fix.
 *
 * What a name guards is what its chosen candidate declares and what every
 * candidate of that name the user has (any source but the project's) declares:
 * a candidate that does not run cannot take a guard away by declaring none. Only
 * the user disabling the name lifts the block.
 *
 * The kernel does not ask whether the plugin had anything to guard (for the
 * hooks plugin: whether hooks of that event are configured): only the plugin
 * knows, and it is the one that could not run. A wrong block is loud and names
 * its fix; a wrong allow would be silent.
 */
import { canonicalEvent } from '../sdk/events.js';
import type { Disposer, PluginState } from '../sdk/plugin.js';
import type { PlinthError } from '../sdk/errors.js';
import type { EventBus } from './events.js';
import { type Candidate, PROJECT_SOURCES } from './types.js';

/** Before every other handler: nothing acts on an event that is going to be blocked anyway. */
const FIRST = Number.MIN_SAFE_INTEGER;

/**
 * The events a plugin name guards: those `chosen` declares, and those each
 * candidate of the name from a source other than the project's declares.
 */
export function guardedEvents(chosen: Pick<Candidate, 'manifest'> | undefined, candidates: readonly Candidate[]): Set<string> {
  const declared = [...(chosen?.manifest.guards ?? []), ...candidates.filter((c) => !PROJECT_SOURCES.has(c.source)).flatMap((c) => c.manifest.guards)];
  return new Set(declared.map((event) => canonicalEvent(event)).filter((event) => event !== undefined));
}

/**
 * Blocks `events` (see {@link guardedEvents}) in the name of `name`, for as long
 * as the returned disposer is not called; undefined when there are none. `error`
 * is why it is not running (already redacted): its code and message are the
 * reason, its hint the fix.
 */
export function blockGuardedEvents(bus: EventBus, name: string, events: ReadonlySet<string>, state: PluginState, error: PlinthError): Disposer | undefined {
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
