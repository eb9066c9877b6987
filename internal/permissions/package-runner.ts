/**
 * What a package runner needs to start a package, as permissions: `npx -y pkg`
 * (and `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`) fetches the package from
 * its npm registry, `uvx pkg` (`uv tool run`, `pipx run`) from its Python index. Confined, the
 * runner reaches only the hosts granted, and gets only the variables granted:
 * without these a pasted Claude Desktop config (`"command": "npx"`) can never
 * start. The registry is the one the runner will use inside the sandbox: a
 * `--registry`/`--index-url` argument, else the variable the definition sets
 * (`npm_config_registry`, `UV_INDEX_URL`, …), else the public default (the
 * sandbox's private HOME holds no `.npmrc` of the user's). The runner's cache
 * stays in that private HOME (`~/.npm`, `~/.cache/uv`): no grant, and nothing
 * shared with the user's own cache.
 */
import path from 'node:path';
import { type Permissions, type PermissionsInput, permissionsSchema } from '../../sdk/contracts/sandbox.js';

const NPM_DEFAULT = 'https://registry.npmjs.org/';
const PYPI_HOSTS = ['pypi.org:443', 'files.pythonhosted.org:443'];

/** What fetches a package: npm's registry (npx and its kin) or a Python index (uvx, pipx). */
export type PackageIndex = 'npm' | 'python';

/** The package runners: the program, the subcommand words that make it one, and where it fetches from. */
const RUNNERS: ReadonlyArray<{ readonly words: readonly string[]; readonly index: PackageIndex }> = [
  { words: ['npx'], index: 'npm' },
  { words: ['pnpx'], index: 'npm' },
  { words: ['bunx'], index: 'npm' },
  { words: ['npm', 'exec'], index: 'npm' },
  { words: ['npm', 'x'], index: 'npm' },
  { words: ['pnpm', 'dlx'], index: 'npm' },
  { words: ['yarn', 'dlx'], index: 'npm' },
  { words: ['bun', 'x'], index: 'npm' },
  { words: ['uvx'], index: 'python' },
  { words: ['uv', 'tool', 'run'], index: 'python' },
  { words: ['pipx', 'run'], index: 'python' },
];

/**
 * The package runner a command line uses (`npx`, `npm exec`, `uv tool run`, …: `name`) and where it
 * fetches from, or undefined. The program is compared without folder and Windows extension
 * (`/usr/bin/npx`, `npx.cmd`); flags before a subcommand (`npm --yes exec`) are skipped.
 */
export function packageRunnerOf(command: string, args: readonly string[]): { readonly name: string; readonly index: PackageIndex } | undefined {
  const program = path.basename(command).replace(/\.(cmd|exe|bat|ps1)$/i, '').toLowerCase();
  const words = args.filter((arg) => !arg.startsWith('-'));
  const runner = RUNNERS.find(({ words: [name, ...sub] }) => name === program && sub.every((word, i) => words[i] === word));
  return runner && { name: runner.words.join(' '), index: runner.index };
}

/** The value of `--<name> value` or `--<name>=value` among `args`. */
function option(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `--${name}`) return args[i + 1];
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/** `host:port` of a URL, as a network permission; undefined when it is not an http(s) URL. */
function hostOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const port = parsed.port !== '' ? parsed.port : parsed.protocol === 'https:' ? '443' : '80';
  return `${parsed.hostname}:${port}`;
}

/**
 * The permissions a package runner's command line implies, with what each is
 * for; undefined when `command` is no package runner. `env`: the definition's
 * variables (name → value as written): the runner's own (`npm_config_*`,
 * `UV_*`, `PIP_*`) are passed, each granted with where its value comes from.
 */
export function packageRunnerPermissions(command: string, args: readonly string[], env: Readonly<Record<string, string>> = {}): { readonly permissions: PermissionsInput; readonly why: string } | undefined {
  const runner = packageRunnerOf(command, args)?.index;
  if (runner === undefined) return undefined;
  const names = Object.keys(env);
  const lookup = (...keys: string[]): string | undefined => {
    for (const key of keys) {
      const found = names.find((name) => name === key || name.toLowerCase() === key.toLowerCase());
      // A value with a reference (`${env:…}`) is read at launch: its host cannot be known here.
      if (found !== undefined && !env[found]!.includes('${')) return env[found];
    }
    return undefined;
  };
  if (runner === 'npm') {
    const registry = option(args, 'registry') ?? lookup('npm_config_registry') ?? NPM_DEFAULT;
    const host = hostOf(registry) ?? hostOf(NPM_DEFAULT)!;
    const own = names.filter((name) => /^npm_config_/i.test(name));
    return { permissions: { network: { allow: [host] }, env: own }, why: `${path.basename(command)} fetches the package from ${host} and keeps npm's cache in the sandbox's private HOME (~/.npm)` };
  }
  const index = option(args, 'index-url') ?? option(args, 'default-index') ?? lookup('UV_DEFAULT_INDEX', 'UV_INDEX_URL', 'PIP_INDEX_URL');
  const hosts = index !== undefined && hostOf(index) !== undefined ? [hostOf(index)!] : PYPI_HOSTS;
  const own = names.filter((name) => /^(UV_|PIP_)/.test(name));
  return { permissions: { network: { allow: hosts }, env: own }, why: `${path.basename(command)} fetches the package from ${hosts.join(', ')} and keeps its cache in the sandbox's private HOME (~/.cache)` };
}

/**
 * `declared` widened by what the command line's package runner implies
 * ({@link packageRunnerPermissions}); `declared` itself when it is none. For a
 * settings hook or server: what it declares and what its runner needs are
 * asked about and granted together, in one question.
 */
export function withPackageRunner(declared: Permissions, command: string | undefined, args: readonly string[], env: Readonly<Record<string, string>> = {}): Permissions {
  const implied = command === undefined ? undefined : packageRunnerPermissions(command, args, env);
  if (implied === undefined) return declared;
  const extra = permissionsSchema.parse(implied.permissions);
  const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];
  return {
    filesystem: { read: union(declared.filesystem.read, extra.filesystem.read), write: union(declared.filesystem.write, extra.filesystem.write) },
    network: { allow: union(declared.network.allow, extra.network.allow), deny: [...declared.network.deny] },
    env: union(declared.env, extra.env),
    shell: [...declared.shell],
    mcp: [...declared.mcp],
  };
}
