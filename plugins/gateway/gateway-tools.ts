/**
 * The two tools the gateway lists in search mode (tool-mode.ts serves them).
 * No imports: test/bench/tool-search.bench.mjs loads this file to measure
 * what search mode lists.
 */
/** The gateway's search tool's name. */
export const SEARCH_TOOL = 'search_tools';
/** The gateway's call tool's name. */
export const CALL_TOOL = 'call_tool';

/** Most definitions one search answers with. */
export const MAX_LIMIT = 20;
export const DEFAULT_LIMIT = 5;

/** The two tools the gateway lists in search mode (test/bench/tool-search.bench.mjs measures these). */
export const GATEWAY_TOOLS = [
  {
    name: SEARCH_TOOL,
    description:
      'Search the tools of every connected MCP server by what you want to do. Returns the best matching tools with their full definitions (name, description, input schema); call one with call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What you want to do, in a few words, e.g. "open a pull request"' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `Most tools returned (default ${DEFAULT_LIMIT})` },
        servers: { type: 'array', items: { type: 'string' }, description: 'Only these servers' },
      },
      required: ['query'],
    },
  },
  {
    name: CALL_TOOL,
    description: 'Call a tool found with search_tools, by its name, with arguments matching its input schema.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The tool name search_tools returned, e.g. github__create_issue' },
        arguments: { type: 'object', description: "The arguments, as the tool's input schema describes" },
      },
      required: ['name'],
    },
  },
] as const;
