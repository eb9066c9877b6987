/**
 * The mcp plugin's client features: tool registry, schema conversion, the
 * tool wrapper, content formatting, resources, prompts, completion, and the
 * answers to requests servers send. The core imports this module when it
 * first connects a server (it loads the SDK); `createToolRegistry` alone is
 * light and may be imported from './registry.js' at setup.
 */
export { attachFeatures, DEFAULT_CALL_TIMEOUT_MS } from './attach.js';
export { callRegisteredTool } from './call.js';
export type { CallContext } from './call.js';
export { classifyError } from './classify.js';
export { askElicitation } from './elicit-form.js';
export type { ElicitAnswer } from './elicit-form.js';
export { base64Bytes, formatBytes, formatContent, formatPromptMessages, formatResourceContents, formatToolResult } from './format.js';
export { createChangeStream } from './listen.js';
export type { ChangeStream } from './listen.js';
export { logServerMessage } from './notifications.js';
export { keepNotificationsBeforeResponses } from './ordering.js';
export { complete, getPrompt, listPrompts } from './prompts.js';
export { createToolRegistry } from './registry.js';
export { createToolSearch, normalizeTerm, oneLineDescription, tokenizeTool } from './search.js';
export type { SearchableRegistry, ToolSearch } from './search.js';
export { CLIENT_CAPABILITIES, prepareClient, terminalOf } from './requests.js';
export { createSubscriptions, listResourceTemplates, listResources, readResource } from './resources.js';
export { MCP_CODES, failedResult } from './result.js';
export type { Failure, McpCallCode } from './result.js';
export { convertSchema, schemaDialect } from './schema.js';
export type { JsonSchema } from './schema.js';
export { listServerTools, namespacedName, paginate, serverOf, toolFilter } from './tools.js';
export { compileSchema, validateAgainst, validatorCacheStats } from './validate.js';
export type * from './types.js';
