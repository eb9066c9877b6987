/**
 * A server's prompts (every page), one prompt rendered with its arguments
 * (the messages, and the same as `role: text`), and argument completion for
 * prompts and resource templates.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/client';
import { orThrow } from './classify.js';
import { DEFAULT_INPUT_ROUNDS, requestInRounds } from './input-required.js';
import { requestMeta } from './request-meta.js';
import { formatPromptMessages } from './format.js';
import type { CatalogContext } from './resources.js';
import { paginate } from './tools.js';
import type { CompletionRef, PromptInfo, PromptRendered } from './types.js';

/** Every prompt of the server (none when it offers no prompts). */
export async function listPrompts(context: CatalogContext): Promise<PromptInfo[]> {
  const { client, server, timeoutMs } = context;
  if (!client.getServerCapabilities()?.prompts) return [];
  const listed = await orThrow({ what: 'prompts/list', server, timeoutMs, redact: context.redact }, () =>
    paginate<Prompt>(async (cursor) => {
      const page = await client.listPrompts(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
      return { items: page.prompts, nextCursor: page.nextCursor };
    }),
  );
  return listed.map((p) => ({
    server,
    name: p.name,
    ...(p.title !== undefined && { title: p.title }),
    ...(p.description !== undefined && { description: p.description }),
    ...(p.arguments !== undefined && {
      arguments: p.arguments.map((a) => ({
        name: a.name,
        ...(a.description !== undefined && { description: a.description }),
        ...(a.required !== undefined && { required: a.required }),
      })),
    }),
  }));
}

/** One prompt with its arguments: the messages, and the same rendered as text. */
export async function getPrompt(context: CatalogContext, name: string, args?: Readonly<Record<string, string>>): Promise<PromptRendered> {
  const { client, server, timeoutMs } = context;
  const meta = requestMeta(client, { logLevel: context.serverLogLevel });
  const rounds = { client, what: `prompts/get ${name} on server "${server}"`, rounds: context.inputRounds ?? DEFAULT_INPUT_ROUNDS, timeoutMs, signal: new AbortController().signal };
  const outcome = await orThrow({ what: `prompts/get ${name}`, server, timeoutMs, redact: context.redact }, () =>
    requestInRounds(rounds, { name, ...(args && { arguments: { ...args } }), ...(meta && { _meta: meta }) }, (params, remaining) =>
      client.getPrompt(params as never, { timeout: remaining, allowInputRequired: true }),
    ),
  );
  const result = (outcome as { result: GetPromptResult }).result;
  const messages = result.messages as ReadonlyArray<Record<string, unknown>>;
  return {
    ...(result.description !== undefined && { description: result.description }),
    messages,
    text: formatPromptMessages(messages),
  };
}

/** Completion values for an argument of a prompt or a resource template; `context` holds arguments already chosen. */
export async function complete(
  context: CatalogContext,
  ref: CompletionRef,
  argument: { name: string; value: string },
  chosen?: Readonly<Record<string, string>>,
): Promise<string[]> {
  const { client, server, timeoutMs } = context;
  if (!client.getServerCapabilities()?.completions) return [];
  const mcpRef = ref.type === 'prompt' ? { type: 'ref/prompt' as const, name: ref.name } : { type: 'ref/resource' as const, uri: ref.uri };
  const result = await orThrow({ what: `completion/complete ${argument.name}`, server, timeoutMs, redact: context.redact }, () =>
    client.complete({ ref: mcpRef, argument: { ...argument }, ...(chosen && { context: { arguments: { ...chosen } } }) }, { timeout: timeoutMs }),
  );
  return result.completion.values;
}
