/**
 * A child's environment: the host variables of an allowlist, those the caller
 * names (`passEnv`), and the values it declares (`env`, which win). Never the
 * host's whole environment, which holds API keys and tokens.
 */
import { BASE_ENV_ALLOWLIST } from 'plinth/sdk';

/** Whether `name` matches `pattern` (exact, or a prefix when the pattern ends in `*`). */
const matches = (pattern: string, name: string): boolean => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);

export function childEnvironment(host: NodeJS.ProcessEnv, passEnv: readonly string[], declared: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  const patterns = [...BASE_ENV_ALLOWLIST, ...passEnv];
  const exact = patterns.filter((p) => !p.endsWith('*'));
  const prefixes = patterns.filter((p) => p.endsWith('*'));
  for (const name of exact) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  if (prefixes.length > 0) {
    for (const [name, value] of Object.entries(host)) {
      if (value !== undefined && prefixes.some((p) => matches(p, name))) env[name] = value;
    }
  }
  return Object.assign(env, declared);
}
