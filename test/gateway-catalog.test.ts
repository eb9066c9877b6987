/**
 * The gateway's naming rules on their own: served names with and without the
 * prefix, the collisions they cause, and shadowed resource URIs that read back.
 */
import { describe, expect, test } from 'vitest';
import { describeCollisions, parseShadowedUri, servedName, shadowedUri, toolTable } from '../plugins/gateway/catalog.js';
import type { McpService, McpServerDefinition, McpTool, ServerStatus } from '../sdk/index.js';

function service(servers: Record<string, { prefix?: boolean; tools: string[] }>): Pick<McpService, 'servers' | 'definition' | 'tools'> {
  const names = Object.keys(servers);
  const tools: McpTool[] = names.flatMap((server) => servers[server]!.tools.map((tool) => ({ name: `${server}__${tool}`, server, tool, inputSchema: { type: 'object' } })));
  return {
    servers: () => names.map((name) => ({ name }) as ServerStatus),
    definition: (name) => (name in servers ? ({ name, ...(servers[name]!.prefix !== undefined && { prefix: servers[name]!.prefix }) } as McpServerDefinition) : undefined),
    // Listed in reverse, so that the table's order is the definition order and not the registry's.
    tools: () => [...tools].reverse(),
  };
}

describe('served names', () => {
  test('<server>__<name> by default, the own name with prefix: false', () => {
    const s = service({ web: { tools: ['search'] }, files: { prefix: false, tools: ['read'] } });
    expect(servedName(s, 'web', 'search')).toBe('web__search');
    expect(servedName(s, 'files', 'read')).toBe('read');
    expect([...toolTable(s).tools.keys()]).toEqual(['web__search', 'read']);
  });

  test('two unprefixed servers with one tool name: the first in definition order keeps it, the collision names both', () => {
    const { tools, collisions } = toolTable(service({ one: { prefix: false, tools: ['echo', 'a'] }, two: { prefix: false, tools: ['echo', 'b'] } }));
    expect(tools.get('echo')?.server).toBe('one');
    expect(collisions).toEqual([{ kind: 'tool', name: 'echo', servers: ['one', 'two'] }]);
    expect(describeCollisions(collisions)).toBe('tool "echo" is served by both "one" and "two"');
  });

  test('an unprefixed tool spelled like another server\'s namespaced one collides too', () => {
    const { collisions } = toolTable(service({ web: { tools: ['search'] }, odd: { prefix: false, tools: ['web__search'] } }));
    expect(collisions).toEqual([{ kind: 'tool', name: 'web__search', servers: ['web', 'odd'] }]);
  });
});

describe('shadowed resource URIs', () => {
  test('read back to their server and URI, whatever the URI holds', () => {
    for (const uri of ['fixture://docs/readme', 'file:///tmp/a b?x=1&y=%20#frag', 'demo://r/ü']) {
      const shadow = shadowedUri('web-2', uri);
      expect(shadow.startsWith('plinth://server/web-2?uri=')).toBe(true);
      expect(parseShadowedUri(shadow)).toEqual({ server: 'web-2', uri });
    }
    expect(parseShadowedUri('fixture://docs/readme')).toBeUndefined();
    expect(parseShadowedUri('plinth://server/?uri=x')).toBeUndefined();
  });
});
