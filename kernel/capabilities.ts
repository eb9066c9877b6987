/**
 * A plugin's in-process capabilities (`ctx.fs`, `ctx.fetch`, `ctx.env`,
 * `ctx.exec`, `ctx.mcp`): each use is checked first — by the `capabilities`
 * service when a plugin provides it (the sandbox: the user's grants, the audit
 * log), else against what the plugin declares — and refused with
 * `PLN_E_PERM_DENIED`. These are checked doors, not a confinement: the
 * plugin's code runs in this process and could import `node:fs` itself.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { CapabilityCheck, CapabilityPlaces, CapabilityRequest } from '../sdk/contracts/capabilities.js';
import type { Launcher } from '../sdk/contracts/launcher.js';
import type { McpService } from '../sdk/contracts/mcp.js';
import { type PlinthError, isPlinthError } from '../sdk/errors.js';
import { writeFileAtomic } from '../sdk/files.js';
import { capabilityDenied as denied, capabilityTarget as targetOf, permits, realTarget } from '../internal/permissions/match.js';
import type { PluginContext, PluginInfo } from '../sdk/plugin.js';

export interface CapabilityDeps {
  readonly info: PluginInfo;
  readonly home: string;
  readonly workspace: string;
  /** Aborted when the plugin is torn down: its children are killed. */
  readonly owner: AbortSignal;
  readonly launcher: () => Promise<Launcher>;
  readonly mcp: () => Promise<McpService>;
  /** The `capabilities` service, or undefined when no plugin provides one. */
  readonly checker: () => Promise<CapabilityCheck | undefined>;
}

type Capabilities = Pick<PluginContext, 'exec' | 'fs' | 'fetch' | 'env' | 'mcp'>;

/** Redirects followed by `ctx.fetch`, each one checked. */
const MAX_REDIRECTS = 10;

export function createCapabilities(deps: CapabilityDeps): Capabilities {
  const { info } = deps;
  const places: CapabilityPlaces = {
    workspace: deps.workspace,
    home: homedir(),
    plinthHome: deps.home,
    tmp: join(deps.home, 'sandbox', 'tmp', info.name.replace('/', '+')),
  };
  const allow = async (request: CapabilityRequest): Promise<void> => {
    const checker = await deps.checker();
    const refusal = checker ? await checker.check(info, request, places) : await checkDeclared(info, request, places);
    if (refusal) throw refusal;
  };
  const real = async (path: string, access: 'read' | 'write'): Promise<string> => {
    const target = await realTarget(path);
    await allow({ kind: 'filesystem', access, path: target });
    return target;
  };

  const fs: PluginContext['fs'] = {
    tmp: places.tmp,
    readFile: (async (path: string, encoding?: 'utf8') => {
      const target = await real(path, 'read');
      return encoding === undefined ? new Uint8Array(await readFile(target)) : readFile(target, encoding);
    }) as PluginContext['fs']['readFile'],
    async writeFile(path, data) {
      await mkdir(places.tmp, { recursive: true }); // its own, always writable: made on first use
      await writeFileAtomic(await real(path, 'write'), data);
    },
    async readdir(path) {
      return readdir(await real(path, 'read'));
    },
    async mkdir(path) {
      await mkdir(places.tmp, { recursive: true });
      await mkdir(await real(path, 'write'), { recursive: true });
    },
  };

  const fetchChecked: PluginContext['fetch'] = async (input, init = {}) => {
    let url = new URL(String(input));
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw denied(info, 'network', url.href, 'only http and https URLs can be fetched');
      await allow({ kind: 'network', host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) });
      const response = await fetch(url, request);
      const location = response.headers.get('location');
      if (init.redirect === 'manual' || response.status < 300 || response.status > 399 || location === null) return response;
      if (init.redirect === 'error') throw denied(info, 'network', url.href, 'the response is a redirect and redirect is "error"');
      if (hop === MAX_REDIRECTS) throw denied(info, 'network', url.href, `more than ${MAX_REDIRECTS} redirects`);
      await response.body?.cancel();
      url = new URL(location, url);
      // As fetch does: 303 (and 301/302 after POST) continue as GET without a body.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method?.toUpperCase() === 'POST')) request = { ...request, method: 'GET', body: null };
    }
  };

  const exec: PluginContext['exec'] = async (request, options = {}) => {
    await allow({ kind: 'shell', program: request.program });
    const signal = options.signal === undefined ? deps.owner : AbortSignal.any([deps.owner, options.signal]);
    const actingFor = { id: info.name, source: info.source, ...(info.dir && { dir: info.dir }), declared: info.manifest.permissions, label: `plugin "${info.name}"` };
    return (await deps.launcher()).run({ ...request, owner: info.name, actingFor }, { ...options, signal });
  };

  return {
    exec,
    fs,
    fetch: fetchChecked,
    env: {
      async get(name) {
        await allow({ kind: 'env', name });
        return process.env[name];
      },
    },
    mcp: {
      async callTool(server, tool, args = {}) {
        await allow({ kind: 'mcp', server });
        const mcp = await deps.mcp();
        const found = mcp.tools().find((t) => t.server === server && t.tool === tool);
        return mcp.callTool(found?.name ?? `${server}__${tool}`, args);
      },
      async readResource(server, uri) {
        await allow({ kind: 'mcp', server });
        return (await deps.mcp()).readResource(server, uri);
      },
    },
  };
}

/** Without a `capabilities` provider: what the plugin declares is what it may use. */
export async function checkDeclared(info: PluginInfo, request: CapabilityRequest, places: CapabilityPlaces): Promise<PlinthError | undefined> {
  const declared = info.manifest.permissions;
  const allowed = await permits(declared, request, { ...places, ...(info.dir && { pluginDir: info.dir }) });
  return allowed ? undefined : denied(info, request.kind, targetOf(request), 'it does not declare it');
}

/** The `capabilities` service, or undefined when no plugin provides it (a provider that failed to load fails closed). */
export async function optionalChecker(get: () => Promise<CapabilityCheck>): Promise<CapabilityCheck | undefined> {
  try {
    return await get();
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_SERVICE_MISSING') return undefined;
    throw error;
  }
}

