/**
 * Masks MCP server secrets. Plugins cannot teach the kernel's redactor new
 * secrets, so the mcp plugin keeps a redactor of its own (the sdk's, which is
 * the kernel's): every resolved env and header value a definition lists in
 * `secrets`, then the kernel's own masking on top. Everything the plugin
 * prints, stores or logs goes through it.
 */
import { Redactor } from 'plinth/internal';

export { REDACTED } from 'plinth/internal';

/** A redactor of server secrets layered over the kernel's. */
export interface SecretRedactor {
  /** Learns secrets (and their JSON-string and URL-encoded forms). Short strings are ignored. */
  add(secrets: Iterable<string>): void;
  /** `text` with every known secret masked, then the kernel's sensitive values. */
  text(text: string): string;
  /** A copy of `value` with every string masked, through plain objects and arrays. */
  value<T>(value: T): T;
}

/** Creates a redactor; `base` is the kernel's (`kernel.redact`). */
export function createRedactor(base: (text: string) => string = (t) => t): SecretRedactor {
  const redactor = new Redactor({ then: base });
  return {
    add(more) {
      for (const secret of more) if (typeof secret === 'string') redactor.add(secret);
    },
    text: (text) => redactor.text(text),
    value: (value) => redactor.value(value),
  };
}

/** Names that usually carry a credential: `--api-key`, `token=`, `?access_token=`, `X-Auth`. */
export const SENSITIVE = /(token|secret|passw(or)?d|pass\b|api[-_]?key|auth|credential|cookie|session|private[-_]?key)/i;

/** The credentials a URL carries (its password, sensitive query values), as written and decoded: secrets for the redactor, since errors quote the URL whole. */
export function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: string[] = [];
  if (parsed.password) found.push(parsed.password, safeDecode(parsed.password));
  for (const [key, value] of parsed.searchParams) if (SENSITIVE.test(key) && value !== '') found.push(value, encodeURIComponent(value));
  return found;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

