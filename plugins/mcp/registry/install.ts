/**
 * What `plinth mcp install` writes: a server entry made from a registry's
 * `server.json`. An npm package runs as `npx -y <identifier>@<exact version>`
 * (never unpinned), a remote as its URL with its `{variables}` filled in.
 * Declared inputs come from `--arg`, `--env`, `--var` and `--header` (or their
 * defaults); a secret one (`isSecret`) is kept in the secret store and the
 * entry holds only `${secret:<key>}`. pypi, oci and mcpb packages come later.
 */
import { PlinthError, type McpServerConfig } from 'plinth/sdk';
import type { McpArgument, McpKeyValueInput, McpPackage, McpRemote, McpServerJson } from 'plinth/internal';
import semver from 'semver';

/** What the user gave on the command line, by input name. */
export interface InstallInputs {
  readonly args: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string>>;
  readonly vars: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
}

/** The entry to write, and the secrets to store first (key → value). */
export interface InstallPlan {
  readonly entry: McpServerConfig;
  readonly secrets: ReadonlyMap<string, string>;
  /** `npm <identifier>@<version>` or `streamable-http <url>`, for a person. */
  readonly what: string;
  readonly kind: 'npm' | 'remote';
}

/** The secret store's key of one input of an installed server. */
export function secretKey(local: string, input: string): string {
  return `mcp-install:${local}:${input}`;
}

/** The plan for `server` under the local name `local`. */
export function planInstall(server: McpServerJson, local: string, inputs: InstallInputs): InstallPlan {
  const npm = (server.packages ?? []).find((p) => p.registryType === 'npm');
  if (npm) return planNpm(server, npm, local, inputs);
  const remote = (server.remotes ?? []).find((r) => r.type === 'streamable-http') ?? server.remotes?.[0];
  if (remote) return planRemote(remote, local, inputs);
  const kinds = [...new Set((server.packages ?? []).map((p) => p.registryType))];
  throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `${server.name}@${server.version} offers ${kinds.length > 0 ? `only ${kinds.join(', ')} packages` : 'no package and no remote'}; plinth installs npm packages and remotes so far (pypi, oci and mcpb come later)`, {
    plugin: 'mcp',
    hint: kinds.length > 0 ? 'define it by hand meanwhile: `plinth mcp add <name> -- <command> [args…]`, pinning the version' : 'ask its publisher to list a package or a remote',
  });
}

function planNpm(server: McpServerJson, pkg: McpPackage, local: string, inputs: InstallInputs): InstallPlan {
  const version = pkg.version !== undefined ? semver.valid(pkg.version) : null;
  if (version === null) {
    throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `${server.name}@${server.version}: its npm package ${pkg.identifier} has ${pkg.version === undefined ? 'no version' : `the version "${pkg.version}", not an exact one`}; plinth installs only a pinned version`, { plugin: 'mcp', hint: 'ask its publisher to give the exact version in "packages[].version"' });
  }
  if (pkg.transport.type !== 'stdio') {
    throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `${server.name}@${server.version}: its npm package serves ${pkg.transport.type}, not stdio; plinth installs stdio packages so far`, { plugin: 'mcp', hint: 'define it by hand meanwhile with `plinth mcp add`' });
  }
  const secrets = new Map<string, string>();
  const usedArgs = new Set<string>();
  const args = [
    '-y',
    ...argumentValues(pkg.runtimeArguments ?? [], inputs.args, usedArgs),
    `${pkg.identifier}@${version}`,
    ...argumentValues(pkg.packageArguments ?? [], inputs.args, usedArgs),
  ];
  unknown(inputs.args, usedArgs, '--arg', [...(pkg.runtimeArguments ?? []), ...(pkg.packageArguments ?? [])].map(argKey));
  const env = keyValues(pkg.environmentVariables ?? [], inputs.env, '--env', local, secrets);
  const entry: McpServerConfig = { command: 'npx', args, ...(Object.keys(env).length > 0 && { env }) };
  return { entry, secrets, what: `npm ${pkg.identifier}@${version}`, kind: 'npm' };
}

function planRemote(remote: McpRemote, local: string, inputs: InstallInputs): InstallPlan {
  const variables = remote.variables ?? {};
  const used = new Set<string>();
  const url = remote.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const decl = variables[name];
    if (decl === undefined) return whole;
    used.add(name);
    const value = inputs.vars[name] ?? decl.value ?? decl.default;
    if (value === undefined) throw missing(`the URL variable "${name}"${decl.description ? ` (${decl.description})` : ''}`, `--var ${name}=<value>`);
    if (decl.isSecret) throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `the URL variable "${name}" is secret; a URL is no place for a secret`, { plugin: 'mcp', hint: 'ask the publisher to take it as a header' });
    return encodeURIComponent(value);
  });
  unknown(inputs.vars, used, '--var', Object.keys(variables));
  const secrets = new Map<string, string>();
  const headers = keyValues(remote.headers ?? [], inputs.headers, '--header', local, secrets);
  const transport = remote.type === 'sse' ? 'sse' : 'http';
  const entry: McpServerConfig = { url, transport, ...(Object.keys(headers).length > 0 && { headers }) };
  return { entry, secrets, what: `${remote.type} ${url}`, kind: 'remote' };
}

/** How an argument is named on the command line (`--arg <key>=value`). */
function argKey(arg: McpArgument): string {
  return arg.type === 'named' ? (arg.name ?? '') : (arg.valueHint ?? arg.name ?? '');
}

function argumentValues(declared: readonly McpArgument[], given: Readonly<Record<string, string>>, used: Set<string>): string[] {
  const out: string[] = [];
  for (const arg of declared) {
    const key = argKey(arg);
    const fromUser = key !== '' && Object.hasOwn(given, key) ? given[key] : undefined;
    if (fromUser !== undefined) used.add(key);
    const value = arg.value ?? fromUser ?? arg.default;
    if (arg.isSecret && value !== undefined && arg.value === undefined) {
      throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `the argument "${key}" is secret; plinth keeps secrets out of command lines, so it cannot install this server yet`, { plugin: 'mcp', hint: 'define it by hand with `plinth mcp add`' });
    }
    if (value === undefined) {
      if (arg.isRequired) throw missing(`the argument "${key}"${arg.description ? ` (${arg.description})` : ''}`, `--arg ${key}=<value>`);
      continue;
    }
    if (arg.type === 'named') out.push(arg.name!, value);
    else out.push(value);
  }
  return out;
}

function keyValues(declared: readonly McpKeyValueInput[], given: Readonly<Record<string, string>>, flag: string, local: string, secrets: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const input of declared) {
    const fromUser = Object.hasOwn(given, input.name) ? given[input.name] : undefined;
    const value = fromUser ?? input.value ?? input.default;
    if (value === undefined) {
      if (input.isRequired) throw missing(`${flag === '--env' ? 'the environment variable' : 'the header'} "${input.name}"${input.description ? ` (${input.description})` : ''}`, `${flag} ${input.name}=<value>`);
      continue;
    }
    if (input.isSecret) {
      const key = secretKey(local, input.name);
      secrets.set(key, value);
      out[input.name] = `\${secret:${key}}`;
    } else out[input.name] = value;
  }
  unknown(given, new Set(declared.map((d) => d.name)), flag, declared.map((d) => d.name));
  return out;
}

function unknown(given: Readonly<Record<string, string>>, used: ReadonlySet<string>, flag: string, known: readonly string[]): void {
  const extra = Object.keys(given).filter((k) => !used.has(k));
  if (extra.length > 0) {
    throw new PlinthError('PLN_E_CLI_USAGE', `${flag} ${extra.join(', ')}: the server declares no such input`, { plugin: 'mcp', hint: known.length > 0 ? `it declares: ${known.join(', ')}` : `it declares none for ${flag}` });
  }
}

function missing(what: string, flag: string): PlinthError {
  return new PlinthError('PLN_E_MCP_INSTALL_INPUT', `${what} is required and has no default`, { plugin: 'mcp', hint: `give it with ${flag} (asking on a terminal comes later)` });
}
