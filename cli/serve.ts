/**
 * `plinth serve --stdio | --http [--port N] [--host H]`: plinth as one MCP
 * server (the gateway plugin). Boots, provides the gateway's answers to
 * server requests as the host's `mcp:*` services, starts every server (as
 * `plinth up` does), waits for their first start, then serves until stdin
 * closes (stdio), or SIGINT/SIGTERM/SIGHUP. Over stdio, stdout carries only
 * the protocol; everything else goes to stderr.
 */
import { type CommandOutput, type CommandSpec, EXIT } from '../sdk/commands.js';
import { PlinthError } from '../sdk/errors.js';
import type { Disposer } from '../sdk/plugin.js';
import type { GatewayEndpoint } from '../sdk/contracts/gateway.js';
import type { Kernel } from '../kernel/kernel.js';
import { reserveStdout } from './output.js';
import type { ProblemLog } from './problems.js';

export const SERVE_SUMMARY = 'Serve every configured MCP server, hook and trust decision as one MCP server (--stdio, or --http on 127.0.0.1)';
export const SERVE_USAGE = 'serve (--stdio | --http [--port <n>] [--host <address>])';

export function serveCommand(kernel: Kernel, problemLog?: ProblemLog): CommandSpec {
  return {
    name: 'serve',
    options: {
      stdio: { type: 'boolean', description: 'Speak MCP on stdin/stdout (what a host that starts plinth wants)' },
      http: { type: 'boolean', description: 'Serve streamable HTTP at http://<host>:<port>/mcp, with a bearer token' },
      port: { type: 'string', description: 'HTTP port (default: the gateway port setting, 7337; 0 picks a free one)', value: '<n>' },
      host: { type: 'string', description: 'HTTP address (default 127.0.0.1; another one is reachable from other machines)', value: '<address>' },
    },
    async run({ options, json, out, signal }) {
      const stdio = options.stdio === true;
      const http = options.http === true;
      if (stdio === http) throw new PlinthError('PLN_E_CLI_USAGE', 'give one of --stdio and --http', { hint: `usage: plinth ${SERVE_USAGE}` });
      if (stdio && (options.port !== undefined || options.host !== undefined)) {
        throw new PlinthError('PLN_E_CLI_USAGE', '--port and --host go with --http', { hint: `usage: plinth ${SERVE_USAGE}` });
      }
      const port = options.port === undefined ? undefined : Number(options.port);
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
        throw new PlinthError('PLN_E_CLI_USAGE', `--port expects a port number from 0 to 65535, got "${String(options.port)}"`, { hint: `usage: plinth ${SERVE_USAGE}` });
      }

      // Over stdio, stdout is the protocol's from the start: a plugin that prints (in setup, in a handler) goes to stderr.
      const reserved = stdio ? reserveStdout() : undefined;
      try {
        return await serveUntilDone(kernel, problemLog, { stdio, port, host: options.host, json, out, signal, output: reserved?.output });
      } finally {
        reserved?.restore();
      }
    },
  };
}

interface ServeRequest {
  readonly stdio: boolean;
  readonly port: number | undefined;
  readonly host: unknown;
  readonly json: boolean;
  readonly out: CommandOutput;
  readonly signal: AbortSignal;
  /** Where the stdio session writes (the reserved stdout). */
  readonly output: NodeJS.WritableStream | undefined;
}

/** Boots, serves over stdio or HTTP until stdin closes or the signal aborts, and closes the gateway. */
async function serveUntilDone(kernel: Kernel, problemLog: ProblemLog | undefined, { stdio, port, host, json, out, signal, output }: ServeRequest): Promise<number> {
  await kernel.boot();
  const gateway = await (await kernel.get('gateway')).create();
  const provided: Disposer[] = [
    kernel.provide('mcp:elicitation', gateway.handlers['mcp:elicitation']),
    kernel.provide('mcp:sampling', gateway.handlers['mcp:sampling']),
    kernel.provide('mcp:roots', gateway.handlers['mcp:roots']),
  ];
  try {
    await kernel.serve();
    await gateway.ready();
    problemLog?.live();
    let endpoint: GatewayEndpoint;
    if (stdio) {
      endpoint = await gateway.serveStdio(output === undefined ? {} : { output });
      out.note('plinth serves MCP on stdin/stdout');
    } else {
      const served = await gateway.serveHttp({ ...(typeof host === 'string' && { host }), ...(port !== undefined && { port }) });
      endpoint = served;
      if (served.warning) out.note(`warning: ${served.warning}`);
      if (json) out.json({ url: served.url, host: served.host, port: served.port, tokenFrom: served.token.from, ...(served.token.generated && { token: served.token.generated }) });
      else {
        const lines = [`plinth serves MCP at ${served.url}`];
        if (served.token.generated) lines.push(`token (shown once, stored in ${served.token.from}): ${served.token.generated}`);
        else lines.push(`token: ${served.token.from}`);
        out.print(lines.join('\n'));
      }
      out.note('press Ctrl-C to stop');
    }
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const keepAlive = setInterval(() => undefined, 2 ** 30);
      const stop = () => {
        clearInterval(keepAlive);
        resolve();
      };
      signal.addEventListener('abort', stop, { once: true });
      void endpoint.closed.then(stop);
    });
    return EXIT.OK;
  } finally {
    await gateway.close();
    for (const dispose of provided) dispose();
  }
}
