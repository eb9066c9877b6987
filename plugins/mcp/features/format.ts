/**
 * MCP content as a terminal shows it: text as is, one bracketed line for
 * what a terminal cannot show (`[image image/png, 12.3 KiB]`), the text of
 * embedded text resources, and structured content as JSON when the result has
 * no text. Server-supplied names, URIs and MIME types in those lines are
 * stripped of control characters; text blocks are the tool's output, kept whole.
 */
import type { ContentBlock } from '@modelcontextprotocol/client';

/** One resource content as servers send it (`resources/read`, embedded resources). */
export interface ResourceContent {
  readonly uri?: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
}

/** `1234` → `1.2 KiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** The decoded size of base64 data, without decoding it. */
export function base64Bytes(data: string): number {
  const body = data.replace(/\s+/g, '');
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((body.length * 3) / 4) - padding);
}

/** One content block as terminal text. */
export function formatContent(block: ContentBlock | Readonly<Record<string, unknown>>): string {
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'image':
    case 'audio':
      return `[${b.type}${label(b.mimeType)}, ${formatBytes(base64Bytes(typeof b.data === 'string' ? b.data : ''))}]`;
    case 'resource':
      return formatResource((b.resource ?? {}) as ResourceContent, true);
    case 'resource_link': {
      const name = clean(typeof b.title === 'string' ? b.title : b.name);
      const description = clean(b.description);
      return `[resource link ${clean(b.uri)}${list(b.mimeType)}]${name ? ` ${name}` : ''}${description ? `: ${description}` : ''}`;
    }
    default:
      return `[${clean(b.type) || 'unknown content'}]`;
  }
}

/** A tool result's content as terminal text; its structured content as JSON when no block is text. */
export function formatToolResult(result: { content?: readonly ContentBlock[]; structuredContent?: unknown }): string {
  const content = result.content ?? [];
  const lines = content.map((block) => formatContent(block));
  const hasText = content.some((block) => block.type === 'text' && block.text !== '');
  if (!hasText && result.structuredContent !== undefined) lines.push(JSON.stringify(result.structuredContent, null, 2));
  return lines.join('\n');
}

/** `resources/read` contents as terminal text: the text itself for one text content, a header line per content otherwise. */
export function formatResourceContents(contents: readonly ResourceContent[]): string {
  if (contents.length === 1 && typeof contents[0]?.text === 'string') return contents[0].text;
  return contents.map((content) => formatResource(content, true)).join('\n');
}

/** Prompt messages (`prompts/get`) as text: `role: content`, one message after the other. */
export function formatPromptMessages(messages: ReadonlyArray<{ role?: unknown; content?: unknown }>): string {
  return messages
    .map((message) => {
      const blocks = Array.isArray(message.content) ? message.content : [message.content ?? {}];
      const text = blocks.map((block) => formatContent(block as Record<string, unknown>)).join('\n');
      return `${clean(message.role) || 'message'}: ${text}`;
    })
    .join('\n');
}

function formatResource(resource: ResourceContent, withText: boolean): string {
  const uri = clean(resource.uri) || '(no uri)';
  if (typeof resource.text === 'string') {
    const header = `[resource ${uri}${list(resource.mimeType)}]`;
    return withText && resource.text !== '' ? `${header}\n${resource.text}` : header;
  }
  const size = typeof resource.blob === 'string' ? `, ${formatBytes(base64Bytes(resource.blob))}` : '';
  return `[resource ${uri}${list(resource.mimeType)}${size}]`;
}

/** ` image/png` for `[image …]`, or nothing. */
function label(value: unknown): string {
  const text = clean(value);
  return text ? ` ${text}` : '';
}

/** `, text/plain` for a list inside brackets, or nothing. */
function list(value: unknown): string {
  const text = clean(value);
  return text ? `, ${text}` : '';
}

/** A server-supplied string for one line: control characters (escape sequences, newlines) removed. */
function clean(value: unknown): string {
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
}
