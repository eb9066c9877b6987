/** What `plinth registry pack|publish|serve` do (see registry.ts for why they are apart). */
import { resolve } from 'node:path';
import { type CommandSpec, EXIT } from '../sdk/commands.js';
import { PlinthError } from '../sdk/errors.js';
import { writeFileAtomic } from '../sdk/files.js';
import { packPlugin } from '../registry/pack.js';
import { publishPlugin } from '../registry/publish.js';
import { serveRegistry } from '../registry/server.js';
import { readSigningKey } from '../registry/signing.js';

export function registryCommands(): CommandSpec[] {
  return [packCommand, publishCommand, serveCommand];
}

const packCommand: CommandSpec = {
  name: 'registry pack',
  args: [{ name: 'dir', required: true, description: 'The plugin folder (the one holding manifest.json)' }],
  options: { out: { type: 'string', description: 'Where to write the tarball (default: ./<name>-<version>.tgz)', value: '<file>' } },
  async run({ args, options, json, out }) {
    const packed = await packPlugin(args[0]!);
    const file = resolve(typeof options.out === 'string' ? options.out : packed.fileName);
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
    'sign-key': { type: 'string', description: 'Sign the version with this ECDSA P-256 private key (PEM), as npm\'s registry signs; the public key is listed in -/npm/v1/keys', value: '<file>' },
  },
  async run({ args, options, json, out }) {
    if (typeof options.to !== 'string' || options.to === '') {
      throw new PlinthError('PLN_E_CLI_USAGE', '"registry publish" needs --to <folder>: the registry folder to add the plugin to', { hint: 'usage: plinth registry publish <dir|file.tgz> --to <folder>' });
    }
    const baseUrl = typeof options['base-url'] === 'string' ? checkedUrl(options['base-url']) : undefined;
    const folder = resolve(options.to);
    const tag = typeof options.tag === 'string' ? options.tag : undefined;
    const signingKey = typeof options['sign-key'] === 'string' ? await readSigningKey(options['sign-key']) : undefined;
    const result = await publishPlugin(folder, args[0]!, { ...(baseUrl && { baseUrl }), ...(tag !== undefined && { tag }), ...(signingKey && { signingKey }) });
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
