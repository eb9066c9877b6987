/** Plugin folders written on the spot for kernel tests, in temporary folders removed after each test. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes a plugin folder (manifest.json, version 1.0.0 and kernel ^1.0.0 unless given, plus `files`) as `root/<name>`. */
export async function writePlugin(root: string, manifest: Record<string, unknown>, files: Record<string, string> = {}): Promise<string> {
  const dir = join(root, String(manifest.name));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ version: '1.0.0', kernel: '^1.0.0', ...manifest }, null, 2));
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** `make()` gives a fresh temporary folder; `removeAll()` (for afterEach) removes every one made. */
export function tempFolders(prefix: string): { make(): Promise<string>; removeAll(): Promise<void> } {
  const made: string[] = [];
  return {
    async make() {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    async removeAll() {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}
