/**
 * `${env:NAME}` and `${setting:plugin.name}` in a server's env and header
 * values. What a reference resolves to is a secret: the caller lists it in
 * the definition's `secrets`, and the mcp plugin masks it wherever it writes.
 *
 * Any other `${…}` is an error rather than text sent as is: a header such as
 * `Bearer ${API_TOKEN}` (another host's spelling) would otherwise reach the
 * server literally and fail in a way that is hard to see.
 */

/** Where references are looked up. */
export interface ReferenceLookup {
  /** An environment variable (`process.env` in the plugin). */
  env(name: string): string | undefined;
  /** A plugin setting: its value, or why it cannot be used. */
  setting(plugin: string, name: string): { value: string } | { problem: string };
}

/** A value with its references resolved, or the first reference that could not be. */
export type Resolved = { readonly value: string; readonly secrets: readonly string[] } | { readonly problem: string };

const REFERENCE = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Resolves every reference in `value`. `written`: how the value's author spelled a reference
 * (a peer's `${TOKEN}` for `${env:TOKEN}`), which a problem quotes instead.
 */
export function resolveReferences(value: string, lookup: ReferenceLookup, written?: (reference: string) => string | undefined): Resolved {
  const secrets: string[] = [];
  let problem: string | undefined;
  const out = value.replace(REFERENCE, (whole, body: string) => {
    if (problem !== undefined) return whole;
    const resolved = resolveOne(body, lookup);
    if ('problem' in resolved) {
      const spelled = written?.(whole);
      problem = spelled === undefined ? resolved.problem : resolved.problem.replaceAll(`"${whole}"`, `"${spelled}"`);
      return whole;
    }
    secrets.push(resolved.value);
    return resolved.value;
  });
  return problem !== undefined ? { problem } : { value: out, secrets };
}

function resolveOne(body: string, lookup: ReferenceLookup): { value: string } | { problem: string } {
  const colon = body.indexOf(':');
  const kind = colon === -1 ? '' : body.slice(0, colon);
  const rest = colon === -1 ? body : body.slice(colon + 1);
  if (kind === 'env') {
    if (!ENV_NAME.test(rest)) return { problem: `"\${${body}}" does not name an environment variable (letters, digits and "_")` };
    const value = lookup.env(rest);
    return value === undefined ? { problem: `"\${env:${rest}}" refers to the environment variable ${rest}, which is not set` } : { value };
  }
  if (kind === 'setting') {
    const dot = rest.lastIndexOf('.');
    if (dot <= 0 || dot === rest.length - 1) return { problem: `"\${${body}}" does not name a setting: expected \${setting:<plugin>.<setting>}` };
    return lookup.setting(rest.slice(0, dot), rest.slice(dot + 1));
  }
  const guess = ENV_NAME.test(body) ? ` (an environment variable is written \${env:${body}})` : '';
  return { problem: `"\${${body}}" is not a reference plinth knows${guess}; references are \${env:NAME} and \${setting:plugin.name}` };
}
