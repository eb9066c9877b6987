/**
 * What `plinth mcp install` writes: a server entry made from a registry's
 * `server.json`. An npm package runs as `npx -y <identifier>@<exact version>`
 * (never unpinned), a remote as its URL with its `{variables}` filled in.
 * Declared inputs come from `--arg`, `--env`, `--var` and `--header` (or their
 * defaults; a required one without either is asked on a terminal, a secret one unechoed); a secret one (`isSecret`) is kept in the secret store and the
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

/** A required input without a value: asked on a terminal (undefined: cannot ask, or no answer). */
export type AskInput = (input: { readonly label: string; readonly flag: string; readonly secret: boolean }) => Promise<string | undefined>;

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
export async function planInstall(server: McpServerJson, local: string, inputs: InstallInputs, ask: AskInput = async () => undefined): Promise<InstallPlan> {
  const npm = (server.packages ?? []).find((p) => p.registryType === 'npm');
  if (npm) return planNpm(server, npm, local, inputs, ask);
  const remote = (server.remotes ?? []).find((r) => r.type === 'streamable-http') ?? server.remotes?.[0];
  if (remote) return planRemote(remote, local, inputs, ask);
  const kinds = [...new Set((server.packages ?? []).map((p) => p.registryType))];
  throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `${server.name}@${server.version} offers ${kinds.length > 0 ? `only ${kinds.join(', ')} packages` : 'no package and no remote'}; plinth installs npm packages and remotes so far (pypi, oci and mcpb come later)`, {
    plugin: 'mcp',
    hint: kinds.length > 0 ? 'define it by hand meanwhile: `plinth mcp add <name> -- <command> [args…]`, pinning the version' : 'ask its publisher to list a package or a remote',
  });
}

async function planNpm(server: McpServerJson, pkg: McpPackage, local: string, inputs: InstallInputs, ask: AskInput): Promise<InstallPlan> {
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
    ...(await argumentValues(pkg.runtimeArguments ?? [], inputs.args, usedArgs, ask)),
    `${pkg.identifier}@${version}`,
    ...(await argumentValues(pkg.packageArguments ?? [], inputs.args, usedArgs, ask)),
  ];
  unknown(inputs.args, usedArgs, '--arg', [...(pkg.runtimeArguments ?? []), ...(pkg.packageArguments ?? [])].map(argKey));
  const env = await keyValues(pkg.environmentVariables ?? [], inputs.env, '--env', local, secrets, ask);
  const entry: McpServerConfig = { command: 'npx', args, ...(Object.keys(env).length > 0 && { env }) };
  return { entry, secrets, what: `npm ${pkg.identifier}@${version}`, kind: 'npm' };
}

async function planRemote(remote: McpRemote, local: string, inputs: InstallInputs, ask: AskInput): Promise<InstallPlan> {
  const variables = remote.variables ?? {};
  const used = new Set<string>();
  const values = new Map<string, string>();
  for (const [, name] of remote.url.matchAll(/\{([^}]+)\}/g)) {
    const decl = variables[name!];
    if (decl === undefined || values.has(name!)) continue;
    used.add(name!);
    if (decl.isSecret) throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `the URL variable "${name}" is secret; a URL is no place for a secret`, { plugin: 'mcp', hint: 'ask the publisher to take it as a header' });
    const label = `the URL variable "${name}"${decl.description ? ` (${decl.description})` : ''}`;
    const value = inputs.vars[name!] ?? decl.value ?? decl.default ?? (await ask({ label, flag: `--var ${name}=<value>`, secret: false }));
    if (value === undefined) throw missing(label, `--var ${name}=<value>`);
    values.set(name!, value);
  }
  const url = remote.url.replace(/\{([^}]+)\}/g, (whole, name: string) => (values.has(name) ? encodeURIComponent(values.get(name)!) : whole));
  unknown(inputs.vars, used, '--var', Object.keys(variables));
  const secrets = new Map<string, string>();
  const headers = await keyValues(remote.headers ?? [], inputs.headers, '--header', local, secrets, ask);
  const transport = remote.type === 'sse' ? 'sse' : 'http';
  const entry: McpServerConfig = { url, transport, ...(Object.keys(headers).length > 0 && { headers }) };
  return { entry, secrets, what: `${remote.type} ${url}`, kind: 'remote' };
}

/** How an argument is named on the command line (`--arg <key>=value`). */
function argKey(arg: McpArgument): string {
  return arg.type === 'named' ? (arg.name ?? '') : (arg.valueHint ?? arg.name ?? '');
}

async function argumentValues(declared: readonly McpArgument[], given: Readonly<Record<string, string>>, used: Set<string>, ask: AskInput): Promise<string[]> {
  const out: string[] = [];
  for (const arg of declared) {
    const key = argKey(arg);
    const fromUser = key !== '' && Object.hasOwn(given, key) ? given[key] : undefined;
    if (fromUser !== undefined) used.add(key);
    if (arg.isSecret && arg.value === undefined && (fromUser !== undefined || arg.default !== undefined || arg.isRequired)) {
      throw new PlinthError('PLN_E_MCP_INSTALL_UNSUPPORTED', `the argument "${key}" is secret; plinth keeps secrets out of command lines, so it cannot install this server yet`, { plugin: 'mcp', hint: 'define it by hand with `plinth mcp add`' });
    }
    const label = `the argument "${key}"${arg.description ? ` (${arg.description})` : ''}`;
    const value = arg.value ?? fromUser ?? arg.default ?? (arg.isRequired ? await ask({ label, flag: `--arg ${key}=<value>`, secret: false }) : undefined);
    if (value === undefined) {
      if (arg.isRequired) throw missing(label, `--arg ${key}=<value>`);
      continue;
    }
    if (arg.type === 'named') out.push(arg.name!, value);
    else out.push(value);
  }
  return out;
}

async function keyValues(declared: readonly McpKeyValueInput[], given: Readonly<Record<string, string>>, flag: string, local: string, secrets: Map<string, string>, ask: AskInput): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const input of declared) {
    const fromUser = Object.hasOwn(given, input.name) ? given[input.name] : undefined;
    const label = `${flag === '--env' ? 'the environment variable' : 'the header'} "${input.name}"${input.description ? ` (${input.description})` : ''}`;
    const example = flag === '--env' ? `--env ${input.name}=<value>` : `--header "${input.name}: <value>"`;
    const value = fromUser ?? input.value ?? input.default ?? (input.isRequired ? await ask({ label, flag: example, secret: input.isSecret === true }) : undefined);
    if (value === undefined) {
      if (input.isRequired) throw missing(label, example);
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
  return new PlinthError('PLN_E_MCP_INSTALL_INPUT', `${what} is required and has no default`, { plugin: 'mcp', hint: `give it with ${flag}, or run the command on a terminal to be asked` });
}
