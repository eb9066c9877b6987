/**
 * The `x-mcp-header` annotation of MCP 2026-07-28 (SEP-2243): a tool's input
 * parameter whose value the client repeats in an `Mcp-Param-<name>` HTTP
 * header. A client over streamable HTTP must leave out every tool whose
 * annotations break the rules (basic/transports/streamable-http, "Custom
 * Headers from Tool Parameters"):
 * - a non-empty HTTP token (RFC 9110 `1*tchar`: no spaces, no delimiters, no control characters);
 * - unique among the tool's annotations, ignoring case;
 * - only on a property of type `string`, `integer` or `boolean` (not `number`);
 * - only on a property reached from the schema's root through `properties` alone
 *   (not under `items`, `additionalProperties`, `oneOf`/`anyOf`/`allOf`/`not`,
 *   `if`/`then`/`else`, `$defs`, …).
 * The SDK's client sends the headers itself (`callTool` with `toolDefinition`);
 * this check decides which tools plinth lists, and says why in its warning.
 */

const ANNOTATION = 'x-mcp-header';
// RFC 9110 §5.6.2 tchar.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);
/** Keywords holding subschemas a `properties` chain does not pass through: an annotation under one is misplaced. */
const ELSEWHERE = [
  'items', 'prefixItems', 'additionalItems', 'contains', 'additionalProperties', 'patternProperties', 'unevaluatedProperties',
  'unevaluatedItems', 'propertyNames', 'dependentSchemas', 'dependencies', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else',
  '$defs', 'definitions',
] as const;

/** What is wrong with the tool's `x-mcp-header` annotations, or undefined when they are valid (or absent). */
export function xMcpHeaderProblem(inputSchema: unknown): string | undefined {
  const names = new Map<string, string>();
  const where = (path: readonly string[]) => (path.length === 0 ? 'the schema root' : `"${path.join('.')}"`);
  const visit = (node: unknown, path: readonly string[], reachable: boolean): string | undefined => {
    if (typeof node !== 'object' || node === null) return undefined;
    if (Array.isArray(node)) {
      for (const item of node) {
        const problem = visit(item, path, false);
        if (problem) return problem;
      }
      return undefined;
    }
    const schema = node as Record<string, unknown>;
    if (Object.hasOwn(schema, ANNOTATION)) {
      const name = schema[ANNOTATION];
      if (!reachable || path.length === 0) return `${ANNOTATION} at ${where(path)} is not on a property reached through "properties" alone`;
      if (typeof name !== 'string' || name === '') return `${ANNOTATION} of ${where(path)} is not a non-empty string`;
      if (!TOKEN.test(name)) return `${ANNOTATION} "${name}" of ${where(path)} is not an HTTP header token (no spaces, control characters or delimiters)`;
      if (typeof schema.type !== 'string' || !HEADER_TYPES.has(schema.type)) {
        return `${ANNOTATION} "${name}" is on ${where(path)} of type ${JSON.stringify(schema.type ?? null)}; only string, integer and boolean parameters may have one`;
      }
      const earlier = names.get(name.toLowerCase());
      if (earlier !== undefined) return `${ANNOTATION} "${name}" repeats "${earlier}" (names are compared ignoring case)`;
      names.set(name.toLowerCase(), name);
    }
    const properties = schema.properties;
    if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
      for (const [key, child] of Object.entries(properties)) {
        const problem = visit(child, [...path, key], reachable);
        if (problem) return problem;
      }
    }
    for (const keyword of ELSEWHERE) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub : typeof sub === 'object' && sub !== null && (keyword === 'patternProperties' || keyword === 'dependentSchemas' || keyword === 'dependencies' || keyword === '$defs' || keyword === 'definitions') ? Object.values(sub) : [sub];
      for (const branch of branches) {
        const problem = visit(branch, [...path, keyword], false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  return visit(inputSchema, [], true);
}
