/**
 * Checks tool arguments (and structured results) against JSON Schema with
 * ajv, the validator the SDK itself uses, and says what is wrong in words a
 * person can act on: `a: must be number (got string)`, `message: is required`.
 *
 * ajv is imported on first use, and a schema is compiled on the first call
 * that needs it, not when its server connects: loading ajv and compiling every
 * tool's schema costs more than `plinth mcp status` or a boot should pay for
 * tools nobody calls. Compiled validators are shared between identical
 * schemas (N copies of one server compile each schema once), keyed by the
 * schema's exact JSON text and its dialect, in a bounded cache: same text,
 * same validator, same errors in the same order; a schema that differs in
 * anything, key order included, gets its own.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { JsonSchema } from './schema.js';

/** Checks one value; returns the problems, empty when the value is valid. */
export type SchemaCheck = (value: unknown) => readonly string[];

/** A compiled check, or why the schema could not be compiled (then nothing is checked and the server decides). */
export type CompiledCheck = { readonly check: SchemaCheck } | { readonly error: string };

interface AjvLike {
  compile(schema: object): ValidateFunction;
  removeSchema(schema: object): unknown;
}

const MAX_PROBLEMS = 20;
/** How many compiled validators are kept by schema text (least recently used dropped first). */
export const SHARED_VALIDATORS_MAX = 512;
type DialectKind = '2020' | '2019' | '07';
const instances = new Map<DialectKind, Promise<AjvLike>>();
/** By schema object: a tool's listed schema finds its validator without serialising it again. */
const byObject = new WeakMap<object, { readonly dialect: DialectKind; readonly check: Promise<CompiledCheck> }>();
/** By dialect and exact JSON text: identical schemas of other servers (or of a re-listing) share one validator. */
const byText = new Map<string, Promise<CompiledCheck>>();
let compilations = 0;

/**
 * Compiles `schema` once and shares the result between identical schemas.
 * `dialect` is the server's `$schema`: draft 2020-12 and 2019-09 get ajv's
 * matching class, anything else draft-07 (which reads draft-04/06 schemas as
 * well). Concurrent first calls share one compilation.
 */
export function compileSchema(schema: JsonSchema, dialect?: string): Promise<CompiledCheck> {
  const kind = dialectKind(dialect);
  const known = byObject.get(schema);
  if (known?.dialect === kind) return known.check;
  // `$id` would register the schema globally in ajv: two tools with one `$id` would collide.
  const { $id: _id, $schema: _dialect, ...body } = schema;
  let key: string | undefined;
  try {
    key = `${kind}\u0000${JSON.stringify(body)}`;
  } catch {
    key = undefined; // not JSON (a cycle, a BigInt): compiled for this object alone
  }
  let check = key === undefined ? undefined : byText.get(key);
  if (check !== undefined) {
    // Most recently used last: the first key is the one to drop.
    byText.delete(key!);
  } else {
    check = compileUncached(body, kind);
  }
  if (key !== undefined) {
    byText.set(key, check);
    if (byText.size > SHARED_VALIDATORS_MAX) byText.delete(byText.keys().next().value!);
  }
  byObject.set(schema, { dialect: kind, check });
  return check;
}

/** How many schemas were compiled, and how many validators are shared by text now (for tests and benchmarks). */
export function validatorCacheStats(): { readonly compilations: number; readonly shared: number } {
  return { compilations, shared: byText.size };
}

/** The problems of `value` against `schema` (convenience for one-off checks). */
export async function validateAgainst(schema: JsonSchema, value: unknown, dialect?: string): Promise<readonly string[]> {
  const result = await compileSchema(schema, dialect);
  return 'check' in result ? result.check(value) : [];
}

async function compileUncached(body: Record<string, unknown>, kind: DialectKind): Promise<CompiledCheck> {
  compilations += 1;
  try {
    const ajv = await ajvFor(kind);
    const validate = ajv.compile(body);
    // ajv keeps every compiled schema in a map keyed by the object; each re-listing brings new objects.
    ajv.removeSchema(body);
    return {
      check(value) {
        if (validate(value)) return [];
        return describeErrors(validate.errors ?? [], value);
      },
    };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function dialectKind(dialect: string | undefined): DialectKind {
  return dialect?.includes('2020-12') ? '2020' : dialect?.includes('2019-09') ? '2019' : '07';
}

function ajvFor(kind: DialectKind): Promise<AjvLike> {
  let instance = instances.get(kind);
  if (!instance) {
    instance = createAjv(kind);
    instances.set(kind, instance);
    instance.catch(() => instances.delete(kind)); // let a later call retry
  }
  return instance;
}

async function createAjv(kind: DialectKind): Promise<AjvLike> {
  const options = { strict: false, allErrors: true, validateSchema: false, logger: false as const };
  const [formats, Ajv] = await Promise.all([import('ajv-formats'), ajvClass(kind)]);
  const ajv = new Ajv(options);
  // A CommonJS module: its default export arrives as `default` or `default.default` depending on the loader.
  const addFormats = (formats.default as unknown as { default?: unknown }).default ?? formats.default;
  (addFormats as unknown as (instance: unknown) => void)(ajv);
  return ajv;
}

type AjvConstructor = new (options: object) => AjvLike;

async function ajvClass(kind: DialectKind): Promise<AjvConstructor> {
  const mod = kind === '2020' ? await import('ajv/dist/2020.js') : kind === '2019' ? await import('ajv/dist/2019.js') : await import('ajv');
  const value = mod.default as unknown as { default?: unknown };
  return (value.default ?? value) as AjvConstructor;
}

/** ajv's errors as one line each, with the argument's path first. */
export function describeErrors(errors: readonly ErrorObject[], value: unknown): string[] {
  const problems: string[] = [];
  for (const error of errors) {
    const problem = describeError(error, value);
    if (problem && !problems.includes(problem)) problems.push(problem);
    if (problems.length === MAX_PROBLEMS) {
      problems.push(`… and ${errors.length - MAX_PROBLEMS} more`);
      break;
    }
  }
  return problems;
}

function describeError(error: ErrorObject, value: unknown): string {
  const segments = pointerSegments(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${pathOf([...segments, String(params.missingProperty)])}: is required`;
    case 'additionalProperties':
      return `${pathOf([...segments, String(params.additionalProperty)])}: is not a known ${segments.length === 0 ? 'argument' : 'property'}`;
    case 'type':
      return `${pathOf(segments)}: must be ${String(params.type).replace(/,/g, ' or ')} (got ${typeName(valueAt(value, segments))})`;
    case 'enum':
      return `${pathOf(segments)}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${pathOf(segments)}: must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${pathOf(segments)}: ${error.message ?? error.keyword}`;
  }
}

/** `/items/0/a~1b` → ['items', '0', 'a/b']. */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** ['items', '0', 'name'] → `items[0].name`; the root is `(arguments)`. */
function pathOf(segments: readonly string[]): string {
  if (segments.length === 0) return '(arguments)';
  let path = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

function valueAt(value: unknown, segments: readonly string[]): unknown {
  let at = value;
  for (const segment of segments) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return at;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
