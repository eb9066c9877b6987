/**
 * A TypeScript host that does `import { createKernel } from 'plinth'` gets
 * typed services from `kernel.get('mcp')` and the other builtin services,
 * without importing a plugin's files: the contracts (and their `Services`
 * merges) ship in the sdk's declarations. Compiled with tsc against the built
 * package (dist/), from a folder outside the repository whose node_modules
 * holds only `plinth` (a link to this checkout) and Node's types.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const run = promisify(execFile);

let host: string;

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'sdk', 'index.d.ts'))) throw new Error('dist/ is not built: run `npm run build` first (npm test does)');
  host = mkdtempSync(join(tmpdir(), 'plinth-host-'));
  mkdirSync(join(host, 'node_modules', '@types'), { recursive: true });
  symlinkSync(root, join(host, 'node_modules', 'plinth'), 'dir');
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(host, 'node_modules', '@types', 'node'), 'dir');
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'a-host', private: true, type: 'module' }));
  copyFileSync(join(root, 'test', 'fixtures', 'host-types', 'host.ts'), join(host, 'host.ts'));
});
afterAll(() => rmSync(host, { recursive: true, force: true }));

/** Runs tsc on `files` in the host folder; its exit code and what it printed. */
async function typeCheck(files: string[]): Promise<{ code: number; output: string }> {
  const tsconfig = {
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'], strict: true, noEmit: true, skipLibCheck: true },
    files,
  };
  writeFileSync(join(host, 'tsconfig.json'), JSON.stringify(tsconfig));
  try {
    const { stdout, stderr } = await run(process.execPath, [tsc, '-p', join(host, 'tsconfig.json')], { cwd: host });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

test('a host gets McpService and the other builtin services from kernel.get, typed, through the built package', async () => {
  const result = await typeCheck(['host.ts']);
  expect(result.output).toBe('');
  expect(result.code).toBe(0);
});

test('the check is real: a wrong use of kernel.get("mcp") fails to compile', async () => {
  writeFileSync(
    join(host, 'wrong.ts'),
    [
      "import { createKernel } from 'plinth';",
      'export async function wrong(): Promise<number> {',
      "  const mcp = await createKernel().get('mcp');",
      '  return mcp.servers();',
      '}',
      '',
    ].join('\n'),
  );
  const result = await typeCheck(['wrong.ts']);
  expect(result.code).not.toBe(0);
  // TS2322: readonly ServerStatus[] is not a number — which needs the type of mcp.servers(), not unknown (TS18046).
  expect(result.output).toContain('TS2322');
  expect(result.output).toContain('ServerStatus');
  expect(result.output).not.toContain('TS18046');
});
