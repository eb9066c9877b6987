/**
 * Prompt templates of `askAgent` hooks: `Run linting on {{file.path}}`.
 *
 * A placeholder is a path of names and indexes (`{{tool}}`, `{{file.path}}`,
 * `{{files[0]}}`, `{{files.0}}`), spaces inside the braces allowed. It is looked
 * up through own properties only (never `__proto__`, `constructor` or a getter
 * on a prototype), so a template cannot reach anything but the values given and
 * nothing in it is executed. Missing values render as an empty string; strings
 * as they are; numbers, booleans and bigints as text; objects and arrays as JSON
 * (read without running getters or `toJSON`; cycles as `"[Circular]"`). Anything between braces that is not such a path is
 * left as written.
 */

const PLACEHOLDER = /\{\{\s*([A-Za-z_$][\w$-]*(?:\.[\w$-]+|\[\d+\])*)\s*\}\}/g;
const SEGMENT = /\.?([\w$-]+)|\[(\d+)\]/g;

/** Renders `template` with `values`; see the module comment for the rules. Never throws. */
export function renderTemplate(template: string, values: Readonly<Record<string, unknown>>): string {
  return template.replace(PLACEHOLDER, (_match, path: string) => stringify(lookup(values, path)));
}

/**
 * The values an `askAgent` prompt of one event sees: the event's context,
 * plus `event` (the name the hook subscribed with). `{{tool}}` and
 * `{{file.path}}` are context fields, when the event's context has them.
 */
export function templateValues(event: string, context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return { ...context, event };
}

function lookup(values: unknown, path: string): unknown {
  let current: unknown = values;
  for (const [, name, index] of path.matchAll(SEGMENT)) {
    if (typeof current !== 'object' || current === null) return undefined;
    const key = name ?? index!;
    if (!Object.hasOwn(current, key)) return undefined;
    const descriptor = Object.getOwnPropertyDescriptor(current, key);
    if (!descriptor || !('value' in descriptor)) return undefined; // an accessor would run code
    current = descriptor.value;
  }
  return current;
}

function stringify(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      return value === null ? '' : toJson(value, []);
    default:
      return ''; // undefined, functions, symbols
  }
}

/**
 * JSON of plain data, read through own enumerable data properties only: no
 * getter or `toJSON` runs. Dates become ISO strings, bigints text, cycles
 * `"[Circular]"`; functions, symbols and undefined are left out (as JSON does).
 */
function toJson(value: object, ancestors: object[]): string {
  if (value instanceof Date) return JSON.stringify(Number.isNaN(value.getTime()) ? null : value.toISOString());
  if (ancestors.includes(value)) return '"[Circular]"';
  const inner = [...ancestors, value];
  const item = (v: unknown): string | undefined => {
    if (typeof v === 'bigint') return JSON.stringify(v.toString());
    if (typeof v === 'object' && v !== null) return toJson(v, inner);
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
    if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
    return undefined;
  };
  if (Array.isArray(value)) {
    const parts: string[] = [];
    for (let i = 0; i < value.length; i++) parts.push(item(dataProperty(value, String(i))) ?? 'null');
    return `[${parts.join(',')}]`;
  }
  const parts: string[] = [];
  for (const key of Object.keys(value)) {
    const text = item(dataProperty(value, key));
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

function dataProperty(target: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(target, key);
  return descriptor && 'value' in descriptor ? descriptor.value : undefined;
}
