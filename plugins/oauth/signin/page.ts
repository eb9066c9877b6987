/**
 * The pages the callback server answers the browser with. Everything shown
 * comes from the query string of a request anyone on this machine can send, so
 * every value is HTML-escaped, and the headers forbid scripts, frames, caching
 * and referrers. The authorization code and the state are never shown.
 */

/** Headers of every page: a forged error_description must not run, stay in a cache or leak through a Referer. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `value` safe inside HTML text and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** What the authorization server said instead of a code (RFC 6749 §4.1.2.1): as received, unescaped. */
export interface AuthorizationErrorParams {
  readonly error: string;
  readonly description?: string;
  readonly uri?: string;
}

// A description is free text from the query string: long enough for a real one, short enough to keep the page small.
const MAX_SHOWN = 500;

function clip(value: string): string {
  return value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value;
}

function page(title: string, paragraphs: readonly string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;line-height:1.5}code{word-break:break-all}</style>',
    `</head><body><h1>${escapeHtml(title)}</h1>`,
    ...paragraphs.map((html) => `<p>${html}</p>`),
    '</body></html>',
    '',
  ].join('\n');
}

/** The browser brought a code back: the terminal takes over. */
export function successPage(server: string): string {
  return page('Signed in', [
    `plinth received the sign-in for <strong>${escapeHtml(server)}</strong>.`,
    'You can close this window and return to the terminal.',
  ]);
}

/** The state was missing or not the one sent: possibly a forged request, so the sign-in stops. */
export function refusedPage(server: string): string {
  return page('Sign-in refused', [
    `plinth refused this sign-in for <strong>${escapeHtml(server)}</strong>: the request did not carry the state plinth sent, so it may be forged (another page or program calling this address).`,
    'Nothing was stored. Close this window and run the sign-in again from the terminal.',
  ]);
}

/** The authorization server sent an error instead of a code. */
export function errorPage(server: string, params: AuthorizationErrorParams): string {
  const paragraphs = [
    `The authorization server did not sign you in to <strong>${escapeHtml(server)}</strong>.`,
    `Error: <code>${escapeHtml(clip(params.error))}</code>`,
  ];
  if (params.description) paragraphs.push(`Description: ${escapeHtml(clip(params.description))}`);
  // Shown as text, never as a link: the address comes from the query string, not from the server we trust.
  if (params.uri) paragraphs.push(`More information: <code>${escapeHtml(clip(params.uri))}</code>`);
  paragraphs.push('Close this window; the terminal says what to do next.');
  return page('Sign-in failed', paragraphs);
}

/** A request to /callback carrying neither a code nor an error. */
export function invalidPage(server: string): string {
  return page('Sign-in failed', [
    `This address received a request for <strong>${escapeHtml(server)}</strong> with neither an authorization code nor an error, so there is nothing to finish.`,
    'Close this window and run the sign-in again from the terminal.',
  ]);
}
