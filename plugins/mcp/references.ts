/**
 * `${env:NAME}`, `${setting:plugin.name}` and `${secret:key}` in a server's env and header
 * values. A `${secret:key}` (the secret store's key, written by `plinth mcp install`) stays as
 * written here and is read from the store at each start (connect.ts: {@link resolveSecretReferences}). What a reference resolves to is a secret: the caller lists it in
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
const SECRET_KEY = /^[A-Za-z0-9._:/-]{1,200}$/;
const SECRET_REFERENCE = /\$\{secret:([A-Za-z0-9._:/-]{1,200})\}/g;

/** Whether `value` holds a `${secret:key}`. */
export function hasSecretReference(value: string): boolean {
  return /\$\{secret:/.test(value);
}

/**
 * `value` with each `${secret:key}` replaced by the secret store's value; the values read go to `found`.
 * @throws Error naming the key (never a value) when the store has none.
 */
export async function resolveSecretReferences(value: string, get: (key: string) => Promise<string | undefined>, found: string[]): Promise<string> {
  const keys = [...value.matchAll(SECRET_REFERENCE)].map((m) => m[1]!);
  const values = new Map<string, string>();
  for (const key of keys) {
    const secret = await get(key);
    if (secret === undefined) throw new Error(`the secret store has no "${key}"`);
    values.set(key, secret);
    found.push(secret);
  }
  return value.replace(SECRET_REFERENCE, (_, key: string) => values.get(key)!);
}

/**
 * Resolves every reference in `value`. `written`: how the value's author spelled a reference
 * (a peer's `${TOKEN}` for `${env:TOKEN}`), which a problem quotes instead.
 */
export function resolveReferences(value: string, lookup: ReferenceLookup, written?: (reference: string) => string | undefined): Resolved {
  const secrets: string[] = [];
  let problem: string | undefined;
  const out = value.replace(REFERENCE, (whole, body: string) => {
    if (problem !== undefined) return whole;
    if (body.startsWith('secret:')) {
      if (!SECRET_KEY.test(body.slice('secret:'.length))) problem = `"\${${body}}" does not name a secret (letters, digits and ".", "_", "-", ":", "/")`;
      return whole;
    }
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
  return { problem: `"\${${body}}" is not a reference plinth knows${guess}; references are \${env:NAME}, \${setting:plugin.name} and \${secret:key}` };
}
