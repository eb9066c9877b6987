/**
 * A server's tool input schema, as the registry shows it: the same JSON
 * Schema (types, descriptions, required, enums, nested objects, arrays,
 * defaults, every constraint), with local `$ref`s inlined so that a model API
 * that does not resolve references still sees the whole shape.
 *
 * Inlining is safe: a reference to itself (a recursive type) is kept as a
 * `$ref`, together with the `$defs`/`definitions` it needs; remote references
 * are kept; and when inlining would blow the schema up (references shared
 * many times) the references are kept as they were. `$schema` is dropped from
 * the copy (model APIs refuse it); the dialect is read with `schemaDialect`.
 */

/** A JSON Schema object. */
export type JsonSchema = Record<string, unknown>;

// Keywords whose values are data, not schemas: a `$ref` key inside them is not a reference.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
// Keywords that only describe: next to a `$ref` they are merged into the inlined schema.
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);
const DEFINITIONS = ['$defs', 'definitions'] as const;
// Beyond this many nodes an inlined copy is not worth its size (or a hostile schema is at work).
const MAX_NODES = 20_000;
const MAX_DEPTH = 200;

/** The converted schema: the server's, with local references inlined where that is safe. */
export function convertSchema(input: unknown): JsonSchema {
  const original = isObject(input) ? (clone(input, 0, new WeakSet()) as JsonSchema) : {};
  delete original.$schema;

  const state = { nodes: 0, overflow: false };
  let schema = inline(original, original, [], state) as JsonSchema;
  if (state.overflow) schema = clone(original, 0, new WeakSet()) as JsonSchema; // keep the references as sent

  // Definitions stay (whole, as sent) only while something outside them still points into them.
  for (const key of DEFINITIONS) delete schema[key];
  const remaining = [...localRefs(schema)];
  for (const key of DEFINITIONS) {
    if (original[key] !== undefined && remaining.some((ref) => ref.startsWith(`#/${key}/`))) schema[key] = original[key];
  }

  // MCP tool arguments are always an object; servers sometimes leave that implicit.
  if (schema.type === undefined && schema.$ref === undefined && !('anyOf' in schema || 'oneOf' in schema || 'allOf' in schema)) schema.type = 'object';
  if (schema.type === 'object' && schema.properties === undefined) schema.properties = {};
  return schema;
}

/** The `$schema` the server declared, if any (which JSON Schema draft to validate with). */
export function schemaDialect(input: unknown): string | undefined {
  return isObject(input) && typeof input.$schema === 'string' ? input.$schema : undefined;
}

/** Every local `$ref` (starting with `#`) left in a schema. */
export function localRefs(schema: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) localRefs(item, found);
  else if (isObject(schema)) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#')) found.add(value);
      else if (!DATA_KEYWORDS.has(key)) localRefs(value, found);
    }
  }
  return found;
}

/** `node` with local references replaced by their targets; `stack` holds the references being expanded. */
function inline(node: unknown, root: JsonSchema, stack: readonly string[], state: { nodes: number; overflow: boolean }): unknown {
  if (state.overflow || ++state.nodes > MAX_NODES) {
    state.overflow = true;
    return node;
  }
  if (Array.isArray(node)) return node.map((item) => inline(item, root, stack, state));
  if (!isObject(node)) return node;

  const ref = node.$ref;
  if (typeof ref === 'string' && ref.startsWith('#') && !stack.includes(ref)) {
    const target = resolvePointer(root, ref);
    if (target !== undefined) {
      const expanded = inline(target, root, [...stack, ref], state);
      const { $ref: _, ...siblings } = node;
      return merge(expanded, inline(siblings, root, stack, state) as JsonSchema);
    }
  }

  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    // Definitions are kept verbatim (when still needed), never expanded in place.
    out[key] = DATA_KEYWORDS.has(key) || (DEFINITIONS as readonly string[]).includes(key) || key === '$ref' ? value : inline(value, root, stack, state);
  }
  return out;
}

/**
 * A referenced schema with the keywords written next to its `$ref`:
 * descriptions and defaults are merged in; constraints apply as well, through `allOf`.
 */
function merge(target: unknown, siblings: JsonSchema): unknown {
  const keys = Object.keys(siblings);
  if (keys.length === 0) return target;
  if (target === true) return siblings;
  if (!isObject(target)) return { allOf: [target], ...siblings };
  if (keys.every((key) => ANNOTATIONS.has(key))) return { ...target, ...siblings };
  return { allOf: [target], ...siblings };
}

/** The value a local JSON pointer (`#`, `#/$defs/Name`, `#/properties/a~1b`) designates in `root`. */
function resolvePointer(root: JsonSchema, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined; // `#anchor` names: left to the validator
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(at) && /^\d+$/.test(part)) at = at[Number(part)];
    else if (isObject(at) && Object.hasOwn(at, part)) at = at[part];
    else return undefined;
  }
  return at;
}

/** A JSON-safe deep copy: no functions, no cycles, bounded depth. */
function clone(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'object' || depth > MAX_DEPTH || seen.has(value)) return undefined;
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((item) => clone(item, depth + 1, seen) ?? null);
  else {
    const copy: JsonSchema = {};
    for (const [key, item] of Object.entries(value)) {
      const cloned = clone(item, depth + 1, seen);
      if (cloned !== undefined) copy[key] = cloned;
    }
    out = copy;
  }
  seen.delete(value); // shared (not cyclic) subtrees are fine
  return out;
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
