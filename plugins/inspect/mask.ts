/**
 * What `config show` masks beyond the sensitive settings the kernel already
 * redacts: every string under a key that names a credential.
 */
import { REDACTED } from 'plinth/internal';

const CREDENTIAL_KEY = /secret|password|passwd|token|authorization|api[-_]?key|cookie|credential|private[-_]?key/i;
const REFERENCE_ONLY = /^(\$\{[^}]*\}\s*)+$/;

/**
 * A copy of settings for display (`config show`) with every string under a
 * key that names a credential masked. Sections owned by plugins pass through
 * the kernel untouched and may hold a credential written out literally (an MCP
 * server's `Authorization` header, an OAuth `clientSecret`). `${env:NAME}` references show as written: they
 * name a secret without holding it. Plugins read their sections unmasked.
 */
export function maskCredentialKeys<T>(value: T): T {
  return maskUnder(value, false) as T;
}

function maskUnder(value: unknown, underCredential: boolean): unknown {
  if (typeof value === 'string') return underCredential && value !== '' && !REFERENCE_ONLY.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((item) => maskUnder(item, underCredential));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) define(out, key, maskUnder(inner, underCredential || CREDENTIAL_KEY.test(key)));
  return out;
}

/** Own-property assignment, so a `"__proto__"` key stays data. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
