/**
 * What the servers of a sign-in answered, request by request, so that a
 * failure can say where it happened. The SDK's OAuth client reports a broken
 * answer as the parse error it caused (`Unexpected token '<' … is not valid
 * JSON`, a list of zod issues), without the address that gave it or its
 * status — and quoting the start of a body that may carry a secret. Only the
 * method, the address without its query, the status and the content type are
 * kept; never a body.
 */
import type { FetchLike } from '@modelcontextprotocol/client';

/** One answer: `GET https://as.example/.well-known/oauth-authorization-server` → 200 `text/html`. */
export interface Answer {
  readonly method: string;
  /** Origin and path: a query (or fragment) is left out. */
  readonly url: string;
  readonly status: number;
  readonly contentType?: string;
}

export interface AnswerLog {
  /** A fetch that records each answer before handing it on. */
  readonly fetch: FetchLike;
  /** The answer last received. */
  last(): Answer | undefined;
  /** The last answer received from `url` (compared without query). */
  from(url: string | URL): Answer | undefined;
}

/** Records what `fetch` answers; the bodies are left untouched for the caller. */
export function recordAnswers(fetch: FetchLike): AnswerLog {
  const answers: Answer[] = [];
  return {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const url = URL.parse(input instanceof Request ? input.url : String(input));
      const contentType = response.headers.get('content-type')?.split(';')[0]?.trim();
      answers.push({
        method: (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
        url: url === null ? '(an unreadable address)' : `${url.origin}${url.pathname}`,
        status: response.status,
        ...(contentType && { contentType }),
      });
      return response;
    },
    last: () => answers.at(-1),
    from: (url) => {
      const wanted = URL.parse(String(url));
      const key = wanted === null ? String(url) : `${wanted.origin}${wanted.pathname}`;
      return answers.findLast((answer) => answer.url === key);
    },
  };
}

/** `GET <url> answered HTTP 200 (text/html)`. */
export function describeAnswer(answer: Answer): string {
  return `${answer.method} ${answer.url} answered HTTP ${answer.status}${answer.contentType ? ` (${answer.contentType})` : ''}`;
}

/**
 * For an error the SDK raised while reading an answer — invalid JSON, or JSON
 * without the fields OAuth requires — what that answer was and what was wrong
 * with it, from `answer`; undefined for any other error (the server's own
 * OAuth error, the network), whose description stands as it is.
 */
export function unreadableAnswer(error: unknown, answer: Answer | undefined): string | undefined {
  if (answer === undefined) return undefined;
  if (error instanceof SyntaxError || (error instanceof Error && /Invalid OAuth error response/.test(error.message))) {
    return `${describeAnswer(answer)}, which is not the JSON OAuth expects`;
  }
  const fields = zodFields(error);
  if (fields === undefined) return undefined;
  return `${describeAnswer(answer)} with JSON that ${fields.length > 0 ? `lacks a valid ${fields.join(', ')}` : 'is not what OAuth expects'}`;
}

/** The fields a zod error (as the SDK throws it when a document does not match its schema) names; undefined for other errors. */
export function zodFields(error: unknown): string[] | undefined {
  const issues = error instanceof Error ? (error as { issues?: unknown }).issues : undefined;
  if (!Array.isArray(issues)) return undefined;
  const fields = issues.map((issue: { path?: unknown }) => (Array.isArray(issue.path) ? issue.path.join('.') : '')).filter((path) => path !== '');
  return [...new Set(fields)];
}
