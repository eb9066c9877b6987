/**
 * `config show` prints settings files back to a person or a script, and a
 * settings file may hold a credential written out literally (an MCP server's
 * `Authorization` header, an OAuth `clientSecret`): sections other plugins own
 * are passed through by the kernel untouched, so their secrets are masked here
 * by the name of the key. `${env:NAME}` references show as written: they name
 * a secret without holding it.
 */
const SECRET_KEY = /secret|password|passwd|token|authorization|api[-_]?key|cookie|credential|private[-_]?key/i;
const REFERENCE_ONLY = /^(\$\{[^}]*\}\s*)+$/;
const MASK = '[redacted]';

/** A copy of `value` with every string under a secret-looking key masked, through objects and arrays. */
export function maskSecretLooking<T>(value: T): T {
  return mask(value, false) as T;
}

function mask(value: unknown, secretKey: boolean): unknown {
  if (typeof value === 'string') return secretKey && value !== '' && !REFERENCE_ONLY.test(value) ? MASK : value;
  if (Array.isArray(value)) return value.map((item) => mask(item, secretKey));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    // Own-property definition, so a "__proto__" key stays data.
    Object.defineProperty(out, key, { value: mask(inner, secretKey || SECRET_KEY.test(key)), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
