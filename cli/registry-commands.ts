/** What `plinth registry pack|publish|serve|keygen|index|revoke|rotate-key` do (see registry.ts for why they are apart). */
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type CommandSpec, EXIT } from '../sdk/commands.js';
import { PlinthError } from '../sdk/errors.js';
import { writeFileAtomic } from '../sdk/files.js';
import { packPlugin } from '../registry/pack.js';
import { publishPlugin, withPublishLock } from '../registry/publish.js';
import { serveRegistry } from '../registry/server.js';
import { publishServer } from '../registry/mcp-servers.js';
import { mcpServerStatusSchema } from '../internal/mcp-registry/server-json.js';
import { type SigningKey, generateSigningKey, readSigningKey } from '../registry/signing.js';
import { rebuildIndex, revokeVersion, rotateKey } from '../registry/trust-documents.js';

export function registryCommands(): CommandSpec[] {
  return [packCommand, publishCommand, publishServerCommand, serveCommand, keygenCommand, indexCommand, revokeCommand, rotateCommand];
}

const keygenCommand: CommandSpec = {
  name: 'registry keygen',
  args: [{ name: 'file', required: true, description: 'Where to write the private key (PEM, mode 0600); the public key goes to <file>.pub' }],
  async run({ args, json, out }) {
    const key = await generateSigningKey(resolve(args[0]!));
    if (json) {
      out.json({ keyid: key.keyid, keytype: key.keytype, file: key.file, publicFile: key.publicFile, publicKey: key.publicKey });
      return EXIT.OK;
    }
    out.print(
      [
        `keyid:       ${key.keyid}`,
        `private key: ${key.file} (0600: keep it secret, never in the registry folder)`,
        `public key:  ${key.publicFile}`,
        `sign with:   plinth registry publish <dir> --to <folder> --sign ${key.file}`,
        `pin it:      "registries": [{ "name": "…", "url": "…", "keys": ["${key.keyid}"] }]`,
      ].join('\n'),
    );
    return EXIT.OK;
  },
};

const indexCommand: CommandSpec = {
  name: 'registry index',
  options: {
    to: { type: 'string', description: 'The registry folder', value: '<folder>' },
    sign: { type: 'string', description: 'The registry\'s private key (PEM)', value: '<key>' },
    ttl: { type: 'string', description: 'Days the index stays valid (default 30)', value: '<days>' },
  },
  async run({ options, json, out }) {
    const folder = requiredFolder(options, 'registry index --to <folder> --sign <key>');
    const key = await requiredKey(options, 'sign', 'registry index --to <folder> --sign <key>');
    const ttlDays = days(options.ttl, '--ttl');
    const index = await locked(folder, () => rebuildIndex(folder, key, ttlDays === undefined ? {} : { ttlDays }));
    if (json) return out.json({ folder, keyid: key.keyid, version: index.version, expires: index.expires, packuments: Object.keys(index.packuments).length });
    out.print(`signed the index of ${folder}: version ${index.version}, ${Object.keys(index.packuments).length} plugin(s), expires ${index.expires} (sign it again before then)`);
  },
};

const revokeCommand: CommandSpec = {
  name: 'registry revoke',
  args: [{ name: 'version', required: true, description: 'name@version to revoke' }],
  options: {
    to: { type: 'string', description: 'The registry folder', value: '<folder>' },
    sign: { type: 'string', description: 'The registry\'s private key (PEM)', value: '<key>' },
    reason: { type: 'string', description: 'Why: shown to everyone who has it installed', value: '<text>' },
    use: { type: 'string', description: 'The version to move to', value: '<version>' },
  },
  async run({ args, options, json, out }) {
    const usage = 'registry revoke <name@version> --to <folder> --sign <key> --reason <text> [--use <version>]';
    const folder = requiredFolder(options, usage);
    const key = await requiredKey(options, 'sign', usage);
    const spec = args[0]!;
    const at = spec.lastIndexOf('@');
    if (at <= 0 || typeof options.reason !== 'string' || options.reason.trim() === '') {
      throw new PlinthError('PLN_E_CLI_USAGE', at <= 0 ? `"${spec}" is not name@version` : '"registry revoke" needs --reason <text>: it is shown to everyone who has the version', { hint: `usage: plinth ${usage}` });
    }
    const entry = { name: spec.slice(0, at), version: spec.slice(at + 1), reason: options.reason.trim(), ...(typeof options.use === 'string' && { use: options.use }) };
    const doc = await locked(folder, () => revokeVersion(folder, key, entry));
    if (json) return out.json({ folder, ...entry, revocations: doc.version });
    out.print(`revoked ${entry.name}@${entry.version} in ${folder}: ${entry.reason}${entry.use ? ` (use ${entry.use})` : ''}`);
  },
};

const rotateCommand: CommandSpec = {
  name: 'registry rotate-key',
  options: {
    to: { type: 'string', description: 'The registry folder', value: '<folder>' },
    from: { type: 'string', description: 'The current private key (PEM): it signs the hand-over', value: '<key>' },
    sign: { type: 'string', description: 'The new private key (PEM), e.g. from `plinth registry keygen`', value: '<key>' },
  },
  async run({ options, json, out }) {
    const usage = 'registry rotate-key --to <folder> --from <current key> --sign <new key>';
    const folder = requiredFolder(options, usage);
    const from = await requiredKey(options, 'from', usage);
    const to = await requiredKey(options, 'sign', usage);
    const result = await locked(folder, () => rotateKey(folder, from, to));
    if (json) return out.json({ folder, from: from.keyid, to: to.keyid, resigned: result.resigned });
    out.print(`${folder} now signs with ${to.keyid} (was ${from.keyid}); ${result.resigned} version(s), the index and the revocations signed again`);
  },
};

function requiredFolder(options: Readonly<Record<string, unknown>>, usage: string): string {
  if (typeof options.to !== 'string' || options.to === '') throw new PlinthError('PLN_E_CLI_USAGE', `needs --to <folder>: the registry folder`, { hint: `usage: plinth ${usage}` });
  return resolve(options.to);
}

async function requiredKey(options: Readonly<Record<string, unknown>>, name: string, usage: string): Promise<SigningKey> {
  const file = options[name];
  if (typeof file !== 'string' || file === '') throw new PlinthError('PLN_E_CLI_USAGE', `needs --${name} <key>: a private key file (\`plinth registry keygen <file>\` makes one)`, { hint: `usage: plinth ${usage}` });
  return readSigningKey(file);
}

function days(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new PlinthError('PLN_E_CLI_USAGE', `${flag} must be a number of days above 0, got "${String(value)}"`, { hint: `e.g. ${flag} 30` });
  return n;
}

const locked = withPublishLock;

/** `--out`: a file, or a folder (one that exists, or any path ending in a separator) that gets the tarball's own name. */
async function tarballPath(option: unknown, fileName: string): Promise<string> {
  if (typeof option !== 'string' || option === '') return resolve(fileName);
  const target = resolve(option);
  const folder = /[\\/]$/.test(option) || (await stat(target).catch(() => undefined))?.isDirectory() === true;
  if (!folder) return target;
  await mkdir(target, { recursive: true });
  return join(target, fileName);
}

const packCommand: CommandSpec = {
  name: 'registry pack',
  args: [{ name: 'dir', required: true, description: 'The plugin folder (the one holding manifest.json)' }],
  options: { out: { type: 'string', description: 'Where to write the tarball: a file, or a folder to hold <name>-<version>.tgz (default: the current folder)', value: '<file|dir>' } },
  async run({ args, options, json, out }) {
    const packed = await packPlugin(args[0]!);
    const file = await tarballPath(options.out, packed.fileName);
    await writeFileAtomic(file, packed.bytes, { mode: 0o644 });
    const { name, version } = packed.manifest;
    if (json) {
      out.json({ name, version, file, size: packed.bytes.length, files: packed.files.length, unpackedSize: packed.unpackedSize, integrity: packed.integrity, sha256: packed.sha256, shasum: packed.shasum });
      return EXIT.OK;
    }
    out.print(
      [
        `packed ${name}@${version}: ${packed.files.length} file(s), ${size(packed.bytes.length)} (${size(packed.unpackedSize)} unpacked)`,
        `file:      ${file}`,
        `integrity: ${packed.integrity}`,
        `sha256:    ${packed.sha256}`,
        `shasum:    ${packed.shasum} (sha1, for npm clients only)`,
      ].join('\n'),
    );
    return EXIT.OK;
  },
};

const publishCommand: CommandSpec = {
  name: 'registry publish',
  args: [{ name: 'source', required: true, description: 'A plugin folder, or a tarball made by `plinth registry pack` or `npm pack`' }],
  options: {
    to: { type: 'string', description: 'The registry folder (created when missing)', value: '<folder>' },
    'base-url': { type: 'string', description: 'Write absolute tarball URLs under this address instead of root-relative ones', value: '<url>' },
    tag: { type: 'string', description: 'Also point this dist-tag (e.g. next) at the version; latest is always the highest stable version', value: '<tag>' },
    sign: { type: 'string', description: 'Sign the version and the registry\'s index with this private key (ed25519 from `plinth registry keygen`, or ECDSA P-256); the public key is listed in -/npm/v1/keys', value: '<key>' },
    'sign-key': { type: 'string', description: 'The same as --sign (its earlier name)', value: '<key>' },
    'index-ttl': { type: 'string', description: 'Days the signed index stays valid (default 30)', value: '<days>' },
  },
  async run({ args, options, json, out }) {
    if (typeof options.to !== 'string' || options.to === '') {
      throw new PlinthError('PLN_E_CLI_USAGE', '"registry publish" needs --to <folder>: the registry folder to add the plugin to', { hint: 'usage: plinth registry publish <dir|file.tgz> --to <folder>' });
    }
    const baseUrl = typeof options['base-url'] === 'string' ? checkedUrl(options['base-url']) : undefined;
    const folder = resolve(options.to);
    const tag = typeof options.tag === 'string' ? options.tag : undefined;
    const keyFile = typeof options.sign === 'string' ? options.sign : typeof options['sign-key'] === 'string' ? options['sign-key'] : undefined;
    const signingKey = keyFile !== undefined ? await readSigningKey(keyFile) : undefined;
    const indexTtlDays = days(options['index-ttl'], '--index-ttl');
    const result = await publishPlugin(folder, args[0]!, { ...(baseUrl && { baseUrl }), ...(tag !== undefined && { tag }), ...(signingKey && { signingKey }), ...(indexTtlDays !== undefined && { indexTtlDays }) });
    if (json) {
      out.json({ ...result, folder });
      return EXIT.OK;
    }
    const id = `${result.name}@${result.version}`;
    const tagged = tag === undefined ? '' : `, ${tag}: ${result.version}`;
    out.print(
      result.status === 'published'
        ? [`published ${id} to ${folder} (latest: ${result.latest}${tagged})`, `tarball:   ${result.tarball}`, `integrity: ${result.integrity}`, ...(signingKey ? [`signed:    ${signingKey.keyid}`] : [])].join('\n')
        : result.status === 'tagged'
          ? `${id} was already in ${folder}; tagged it ${tag}`
          : `${id} is already in ${folder} with the same content; nothing changed`,
    );
    return EXIT.OK;
  },
};

const publishServerCommand: CommandSpec = {
  name: 'registry publish-server',
  args: [{ name: 'file', required: true, description: 'A server.json document (the MCP Registry\'s format)' }],
  options: {
    to: { type: 'string', description: 'The registry folder (created when missing)', value: '<folder>' },
    status: { type: 'string', description: 'active (default for a new version), deprecated or deleted; given for a published version, it changes only the status', value: '<status>' },
  },
  async run({ args, options, json, out }) {
    const usage = 'registry publish-server <server.json> --to <folder> [--status active|deprecated|deleted]';
    const folder = requiredFolder(options, usage);
    let status;
    if (options.status !== undefined) {
      const parsed = mcpServerStatusSchema.safeParse(options.status);
      if (!parsed.success) throw new PlinthError('PLN_E_CLI_USAGE', `--status must be active, deprecated or deleted, got "${String(options.status)}"`, { hint: `usage: plinth ${usage}` });
      status = parsed.data;
    }
    await mkdir(folder, { recursive: true });
    const result = await publishServer(folder, resolve(args[0]!), status === undefined ? {} : { status });
    if (json) return out.json({ ...result, folder });
    const id = `${result.name}@${result.version}`;
    out.print(
      result.outcome === 'published'
        ? `published MCP server ${id} (${result.status}) to ${folder}; \`plinth registry serve ${folder}\` answers /v0.1/servers`
        : result.outcome === 'status'
          ? `${id} in ${folder} is now ${result.status}`
          : `${id} is already in ${folder} as it is; nothing changed`,
    );
  },
};

const serveCommand: CommandSpec = {
  name: 'registry serve',
  args: [{ name: 'folder', required: true, description: 'A registry folder made by `plinth registry publish`' }],
  options: {
    port: { type: 'string', description: 'Port on 127.0.0.1 (default 0: a free one)', value: '<n>' },
    token: { type: 'string', description: 'Require `Authorization: Bearer <token>` (or set PLINTH_REGISTRY_TOKEN)', value: '<token>' },
  },
  async run({ args, options, json, out, signal }) {
    const port = options.port === undefined ? 0 : Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new PlinthError('PLN_E_CLI_USAGE', `--port must be a port number from 0 to 65535, got "${String(options.port)}"`, { hint: 'use --port 0 (or leave it out) for a free port' });
    }
    const token = typeof options.token === 'string' ? options.token : process.env.PLINTH_REGISTRY_TOKEN || undefined;
    const folder = resolve(args[0]!);
    const server = await serveRegistry(folder, { port, ...(token !== undefined && { token }) });
    if (json) out.json({ url: server.url, folder, token: token !== undefined });
    else {
      out.print(server.url);
      out.note(`serving ${folder}${token !== undefined ? ' (a token is required)' : ''}; press Ctrl-C to stop`);
    }
    await new Promise<void>((done) => {
      if (signal.aborted) return done();
      // A listening server keeps the process alive; the signal ends it.
      signal.addEventListener('abort', () => done(), { once: true });
    });
    await server.close();
    return EXIT.OK;
  },
};

function checkedUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {
    // reported below
  }
  throw new PlinthError('PLN_E_CLI_USAGE', `--base-url must be an http(s) URL, got "${value}"`, { hint: 'e.g. --base-url https://plugins.example.com/' });
}

function size(bytes: number): string {
  return bytes < 1000 ? `${bytes} B` : bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1_000_000).toFixed(1)} MB`;
}
