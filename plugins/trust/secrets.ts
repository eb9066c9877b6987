/**
 * Which values are secrets, for what trust shows and keeps: never shown,
 * never stored (only their hash, inside the fingerprint).
 * Env names whose values are secrets are the sdk's SECRET_NAME; header values are always masked.
 */
import { SECRET_NAME } from 'plinth/internal';

/** What is shown instead of a secret. */
export const HIDDEN = '(hidden)';

/** Prefixes of well-known credentials (GitHub, OpenAI-style, Slack, AWS, Google, JWTs). */
const CREDENTIAL_PREFIX = /^(?:gh[pousr]_|github_pat_|sk-|xox[abprs]-|AKIA|ASIA|AIza|eyJ)/;

/**
 * Whether an env value is to be masked: under a secret-looking name, or
 * looking like a credential itself (a known prefix, or a long run of token
 * characters with letters and digits that is neither a path nor a URL), so
 * that a token under an innocent name (`GITHUB_PAT`) is neither shown nor
 * kept in the store. `${env:…}` references are shown: they are no secret.
 */
export function isSecretValue(name: string, value: string): boolean {
  if (SECRET_NAME.test(name)) return true;
  if (CREDENTIAL_PREFIX.test(value)) return true;
  if (value.length < 20 || /\s/.test(value) || value.includes('://') || /^\.{0,2}\//.test(value)) return false;
  return /^[A-Za-z0-9_\-.+/=:]+$/.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value);
}

/** The references plinth resolves (`${env:NAME}`, `${setting:plugin.name}`), kept by `split`; any other `${…}` is text. */
const REFERENCES = /(\$\{(?:env:[A-Za-z_][A-Za-z0-9_]*|setting:[^}\s]+)\})/;

/**
 * A value as a person is shown it: its `${…}` references as written — they are
 * no secret, and they say where the value comes from (`API_TOKEN: ${env:AWS_SECRET_ACCESS_KEY}`
 * is shown, not hidden) — and the text around them masked where it is a secret
 * (under a secret-looking name, looking like a credential, or `always`: a
 * header's value). Undefined when nothing but `(hidden)` would be shown.
 */
export function shownValue(name: string, value: string, always = false): string | undefined {
  const parts = value.split(REFERENCES);
  if (parts.length === 1) return always || isSecretValue(name, value) ? undefined : value;
  return parts.map((part, i) => (i % 2 === 1 || part === '' ? part : always || isSecretValue(name, part) ? HIDDEN : part)).join('');
}
