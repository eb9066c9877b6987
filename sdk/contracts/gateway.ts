/**
 * The `gateway` service's contract: plinth served as one MCP server (`plinth
 * serve`), over stdio or streamable HTTP, with every configured server's
 * tools, resources, prompts and completions behind it and every tool call
 * through plinth's pipeline (`before_tool`, the call, `after_tool`).
 *
 * ```ts
 * const gateway = await (await kernel.get('gateway')).create();
 * for (const [name, handler] of Object.entries(gateway.handlers)) kernel.provide(name, handler);
 * await kernel.serve();           // starts the servers
 * await gateway.ready();          // their first start, and the name check
 * const endpoint = await gateway.serveHttp({ port: 7337 });
 * ```
 */
import type { ElicitationHandler, RootsHandler, SamplingHandler } from './mcp.js';

/** Where the HTTP endpoint listens. */
export interface GatewayHttpOptions {
  /** Default: the gateway's `host` setting (127.0.0.1). */
  readonly host?: string;
  /** Default: the gateway's `port` setting; 0 picks a free port. */
  readonly port?: number;
}

/** The bearer token every HTTP request needs. */
export interface GatewayToken {
  /** Where it is stored (0600), or the setting it came from. */
  readonly from: string;
  /** Set only when this run generated it: the one time it is shown. */
  readonly generated?: string;
}

/** A running endpoint. */
export interface GatewayEndpoint {
  /** Resolves when the endpoint has ended (stdin closed, `close` called). */
  readonly closed: Promise<void>;
  /** Downstream sessions open now. */
  sessions(): number;
  /** Ends the endpoint and its sessions; `closed` then resolves. */
  close(): Promise<void>;
}

/** The HTTP endpoint. */
export interface GatewayHttpEndpoint extends GatewayEndpoint {
  /** `http://<host>:<port>/mcp`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly token: GatewayToken;
  /** Set when `host` is not a loopback address: what the host should tell the user. */
  readonly warning?: string;
}

/** One gateway: the downstream side of every served session. */
export interface Gateway {
  /**
   * Answers to requests upstream servers send (elicitation, sampling, roots):
   * forwarded to a downstream client that declared the capability, else
   * `undefined` (plinth's own answer). The host provides them as the
   * `mcp:elicitation`, `mcp:sampling` and `mcp:roots` services before servers start.
   */
  readonly handlers: {
    readonly 'mcp:elicitation': ElicitationHandler;
    readonly 'mcp:sampling': SamplingHandler;
    readonly 'mcp:roots': RootsHandler;
  };
  /**
   * Waits (at most the `startWait` setting) for the servers' first start, then
   * checks the names the gateway will serve.
   * @throws PlinthError PLN_E_GATEWAY_NAME_COLLISION when two servers would serve one name (`prefix: false`), naming both.
   */
  ready(): Promise<void>;
  /** Serves one session over `input`/`output` (default: the process's stdin and stdout). */
  serveStdio(io?: { readonly input?: NodeJS.ReadableStream; readonly output?: NodeJS.WritableStream }): Promise<GatewayEndpoint>;
  /**
   * Listens for streamable HTTP on `/mcp`: Host and Origin checked (403), then the bearer token (401).
   * @throws PlinthError PLN_E_GATEWAY_LISTEN when the address cannot be bound.
   */
  serveHttp(options?: GatewayHttpOptions): Promise<GatewayHttpEndpoint>;
  /** Ends every endpoint and session; idempotent. */
  close(): Promise<void>;
}

/** The `gateway` service. */
export interface GatewayService {
  /** A new gateway over the `mcp` service's servers, serving none yet: call `serveStdio` or `serveHttp`. */
  create(): Promise<Gateway>;
}

declare module '../index.js' {
  interface Services {
    gateway: GatewayService;
  }
}
