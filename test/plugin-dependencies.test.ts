/**
 * Each builtin plugin's manifest names, in `dependencies`, every plugin whose
 * service it asks for (`kernel.get('<service>')` in its code) and cannot run
 * without; the few services a plugin uses only when present are listed below
 * with the reason, and must be asked for in a way that survives their absence.
 * A plugin that starts asking for another plugin's service fails here until
 * its manifest says so (or the use is shown to be optional).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pluginsDir = join(root, 'plugins');

/** Services a plugin uses only when some plugin provides them, and why that is safe. */
const OPTIONAL: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  mcp: {
    health: 'the HEALTH column and health-aware restarts; without the plugin they are left out (cli-health.ts, optionalHealth)',
    oauth: 'a provider for remote servers that use OAuth, and the sign-in offer; without the plugin, none (optionalService, PLN_E_SERVICE_MISSING)',
    grants: "an untrusted server's hint also names what its confined start will need granted; without the sandbox plugin the hint is the approval alone (optionalService)",
    secrets: '`${secret:…}` references (written by `mcp install` for a registry server\'s secret inputs) are read from it at start; without a provider such a server fails to start with PLN_E_MCP_SECRET_MISSING, and `mcp install` refuses a secret input naming the oauth plugin (optionalService)',
  },
  extensions: {
    marketplace: 'the optional update check under plinth up (updateCheck, off by default); without the plugin it says it was skipped and why',
    secrets: '`ext config` of a sensitive setting stores it there; without a provider it refuses with PLN_E_EXT_SECRETS_UNAVAILABLE and names the environment variable instead',
    grants: '`ext enable` asks about the permissions the plugin declares at once; without the sandbox plugin nothing is asked (optionalGrants)',
  },
  marketplace: {
    grants: '`ext install`/`ext update` ask about what an installed plugin declares beyond its grant; without the sandbox plugin nothing is asked (optionalGrants)',
  },
  launcher: {
    sandbox: 'launches with `actingFor` are confined by it; without a sandbox plugin they start as before (optionalSandbox; a sandbox that fails to load refuses them, PLN_E_SANDBOX_SETUP)',
  },
  gateway: {
    health: 'the health column of the status resource (healthStates); without the plugin it is left out',
  },
  hooks: {
    mcp: '`mcp_tool` hooks (and an `agent` hook\'s tools) call a configured server; without the plugin such a hook cannot run and blocks a gate event, naming the mcp plugin (handlers.ts, `kept`/`optional`)',
    capabilities: "`http` and `mcp_tool` hooks' uses are checked against the sandbox's grants; without the plugin, against what the hook's principal declares (handlers.ts `capability`)",
  },
  scaffold: {
    trust: '`plugin new` approves what it created; without the trust plugin nothing gates plugins and the command says why it could not approve',
  },
};

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly provides?: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

const manifests: Manifest[] = readdirSync(pluginsDir, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => JSON.parse(readFileSync(join(pluginsDir, e.name, 'manifest.json'), 'utf8')) as Manifest);

/** Service name → the builtin plugins that provide it. */
const providers = new Map<string, string[]>();
for (const manifest of manifests) for (const service of manifest.provides ?? []) providers.set(service, [...(providers.get(service) ?? []), manifest.name]);

/** The services a plugin's code asks for by a literal name, with where. */
function servicesAskedFor(plugin: string): Map<string, string[]> {
  const asked = new Map<string, string[]>();
  for (const file of sourceFiles(join(pluginsDir, plugin))) {
    const source = readFileSync(file, 'utf8');
    // `kernel.get('x')`, and `optionalService(kernel, 'x')` (the sdk's get that answers undefined when none provides it).
    for (const match of source.matchAll(/\b(?:get\(|optionalService\(\s*\w+\s*,)\s*(['"])([a-z][a-z0-9:-]*)\1\s*\)/g)) {
      const service = match[2]!;
      if (!providers.has(service)) continue; // a Map's or URLSearchParams' get, not a service
      const line = source.slice(0, match.index).split('\n').length;
      asked.set(service, [...(asked.get(service) ?? []), `${relative(root, file)}:${line}`]);
    }
  }
  return asked;
}

test('each builtin plugin declares a dependency on the plugin of every service it needs', () => {
  expect(manifests.length).toBeGreaterThan(8);
  const problems: string[] = [];
  let seen = 0;
  for (const manifest of manifests) {
    for (const [service, places] of servicesAskedFor(manifest.name)) {
      seen += 1;
      const from = providers.get(service)!;
      if (from.includes(manifest.name)) continue; // its own service
      if (OPTIONAL[manifest.name]?.[service] !== undefined) continue;
      const declared = Object.keys(manifest.dependencies ?? {});
      if (!from.some((provider) => declared.includes(provider))) {
        problems.push(`${manifest.name} asks for "${service}" (${places.join(', ')}) but its manifest's dependencies do not name ${from.join(' or ')}`);
      }
    }
  }
  expect(seen).toBeGreaterThan(5); // the scan did find service requests
  expect(problems).toEqual([]);
});

test('what is listed as optional is asked for, and not declared as a dependency (that would make it required)', () => {
  for (const [plugin, services] of Object.entries(OPTIONAL)) {
    const manifest = manifests.find((m) => m.name === plugin)!;
    const asked = servicesAskedFor(plugin);
    for (const service of Object.keys(services)) {
      expect(asked.has(service), `${plugin} no longer asks for ${service}: drop it from OPTIONAL`).toBe(true);
      expect(Object.keys(manifest.dependencies ?? {})).not.toEqual(expect.arrayContaining(providers.get(service)!));
    }
  }
});
