/**
 * Masks MCP server secrets. Plugins cannot teach the kernel's redactor new
 * secrets, so the mcp plugin keeps a redactor of its own (the sdk's, which is
 * the kernel's): every resolved env and header value a definition lists in
 * `secrets`, then the kernel's own masking on top. Everything the plugin
 * prints, stores or logs goes through it.
 */
import { Redactor } from 'plinth/sdk';

export { REDACTED } from 'plinth/sdk';

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
