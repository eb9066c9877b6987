/** A complete hook definition for tests: plain defaults (a user hook on before_tool that blocks on error), fields overridden. */
import type { HookDefinition } from '../../plugins/hooks/types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function hookDefinition(fields: Partial<Mutable<HookDefinition>> & Pick<HookDefinition, 'id'>): HookDefinition {
  return {
    name: fields.id,
    events: ['before_tool'],
    subscribedAs: ['before_tool'],
    matcher: {},
    action: { type: 'command', command: 'node', args: [] },
    cwd: process.cwd(),
    timeoutMs: 5_000,
    priority: 0,
    dependsOn: [],
    parallel: false,
    rateLimit: {},
    onError: 'block',
    enabled: true,
    persistent: false,
    source: 'user',
    origin: 'test',
    ...fields,
  };
}
