/**
 * The MCP Registry's documents (API v0.1, server.json schema 2025-12-11), as
 * plinth reads them: what `plinth registry serve` answers and what the mcp
 * plugin's registry client checks. Only the fields plinth uses are named; the
 * rest pass through (`passthrough`), so a newer registry's additions are kept.
 */
import { z } from 'zod';

/** The `_meta` key under which a registry states a version's status and dates. */
export const MCP_REGISTRY_OFFICIAL_META = 'io.modelcontextprotocol.registry/official';

/** The API prefix plinth speaks. */
export const MCP_REGISTRY_API = 'v0.1';

const input = {
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  format: z.string().optional(),
  value: z.string().optional(),
  default: z.string().optional(),
  choices: z.array(z.string()).optional(),
};

/** A value a user gives: an environment variable, a header, a URL variable. */
export const mcpKeyValueInputSchema = z.object({ name: z.string().min(1), ...input }).passthrough();

/** An argument of a package: `positional` (its `value` or `valueHint`) or `named` (`--name value`). */
export const mcpArgumentSchema = z
  .object({
    type: z.enum(['positional', 'named']),
    name: z.string().optional(),
    valueHint: z.string().optional(),
    isRepeated: z.boolean().optional(),
    ...input,
  })
  .passthrough();

const transportSchema = z
  .object({
    type: z.enum(['stdio', 'streamable-http', 'sse']),
    url: z.string().optional(),
    headers: z.array(mcpKeyValueInputSchema).optional(),
  })
  .passthrough();

/** One way to get the server as a package. */
export const mcpPackageSchema = z
  .object({
    registryType: z.string().min(1),
    registryBaseUrl: z.string().optional(),
    identifier: z.string().min(1),
    version: z.string().optional(),
    fileSha256: z.string().optional(),
    runtimeHint: z.string().optional(),
    transport: transportSchema,
    runtimeArguments: z.array(mcpArgumentSchema).optional(),
    packageArguments: z.array(mcpArgumentSchema).optional(),
    environmentVariables: z.array(mcpKeyValueInputSchema).optional(),
  })
  .passthrough();

/** A server reached over the network; `{var}` in `url` names one of `variables`. */
export const mcpRemoteSchema = z
  .object({
    type: z.enum(['streamable-http', 'sse']),
    url: z.string().min(1),
    headers: z.array(mcpKeyValueInputSchema).optional(),
    variables: z.record(z.string(), z.object(input).passthrough()).optional(),
  })
  .passthrough();

/** A `server.json` document. */
export const mcpServerJsonSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/, 'a reverse-DNS name with one "/", e.g. io.github.user/server'),
    description: z.string().optional(),
    title: z.string().optional(),
    version: z.string().min(1).max(255),
    websiteUrl: z.string().optional(),
    repository: z.object({ url: z.string(), source: z.string() }).passthrough().optional(),
    packages: z.array(mcpPackageSchema).optional(),
    remotes: z.array(mcpRemoteSchema).optional(),
  })
  .passthrough();

export const mcpServerStatusSchema = z.enum(['active', 'deprecated', 'deleted']);

/** What a registry says of one version (`_meta["io.modelcontextprotocol.registry/official"]`). */
export const mcpOfficialMetaSchema = z
  .object({
    status: mcpServerStatusSchema,
    publishedAt: z.string().optional(),
    updatedAt: z.string().optional(),
    isLatest: z.boolean().optional(),
  })
  .passthrough();

/** One entry of a list, or the answer for one version. */
export const mcpServerResponseSchema = z
  .object({
    server: mcpServerJsonSchema,
    _meta: z.object({ [MCP_REGISTRY_OFFICIAL_META]: mcpOfficialMetaSchema.optional() }).passthrough().optional(),
  })
  .passthrough();

/** `GET /v0.1/servers` and `GET /v0.1/servers/{name}/versions`. */
export const mcpServerListSchema = z
  .object({
    servers: z.array(mcpServerResponseSchema),
    metadata: z.object({ nextCursor: z.string().optional().nullable(), count: z.number().optional() }).passthrough().optional(),
  })
  .passthrough();

export type McpServerJson = z.infer<typeof mcpServerJsonSchema>;
export type McpPackage = z.infer<typeof mcpPackageSchema>;
export type McpRemote = z.infer<typeof mcpRemoteSchema>;
export type McpArgument = z.infer<typeof mcpArgumentSchema>;
export type McpKeyValueInput = z.infer<typeof mcpKeyValueInputSchema>;
export type McpServerStatus = z.infer<typeof mcpServerStatusSchema>;
export type McpServerResponse = z.infer<typeof mcpServerResponseSchema>;
export type McpServerList = z.infer<typeof mcpServerListSchema>;

/** The status a response states (`active` when it says none). */
export function statusOf(response: McpServerResponse): McpServerStatus {
  return response._meta?.[MCP_REGISTRY_OFFICIAL_META]?.status ?? 'active';
}

/** `a.b.c` of the issue's error messages: the JSON path of a zod issue. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc === '' ? String(p) : `${acc}.${String(p)}`), '');
}
