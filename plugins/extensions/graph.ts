/** Who depends on whom among the plugins the kernel resolved, from their manifests. */
import type { Candidate } from 'plinth/sdk';

/** The plugins of `chosen` that depend on `name`, directly or through others, in load order. */
export function dependentsOf(name: string, chosen: readonly Candidate[]): string[] {
  const stopping = new Set([name]);
  const found: string[] = [];
  // Load order puts every plugin after its dependencies: one pass sees each chain whole.
  for (const candidate of chosen) {
    const own = candidate.manifest.name;
    if (stopping.has(own)) continue;
    if (Object.keys(candidate.manifest.dependencies).some((dep) => stopping.has(dep))) {
      stopping.add(own);
      found.push(own);
    }
  }
  return found;
}

/** `name` and every plugin it depends on, directly or not. */
export function dependenciesOf(name: string, chosen: readonly Candidate[]): Set<string> {
  const byName = new Map(chosen.map((c) => [c.manifest.name, c]));
  const seen = new Set<string>();
  const stack = [name];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...Object.keys(byName.get(next)?.manifest.dependencies ?? {}));
  }
  return seen;
}
