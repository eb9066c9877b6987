/**
 * What the suites that run hooks through a kernel with the builtin plugins share: the build
 * checked and `CI=1` (no terminal prompts) for the whole file; the first kernel of a worker, which
 * imports every builtin plugin (a second each, several on a loaded machine), paid once in
 * `beforeAll` under its own limit rather than by whichever test comes first; the kernels a test
 * booted disposed after it, and the folders the file made removed after the file.
 */
import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createTestKernel, type TestKernel } from '../../testing/index.js';
import { ensureBuilt } from './cli.js';

export function hookSuite(): { readonly kernels: TestKernel[]; readonly folders: string[] } {
  const kernels: TestKernel[] = [];
  const folders: string[] = [];
  const savedCI = process.env.CI;
  beforeAll(async () => {
    ensureBuilt();
    process.env.CI = '1';
    const warm = await createTestKernel({ builtin: true });
    await warm.dispose();
  }, 300_000);
  afterEach(async () => {
    await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  });
  afterAll(async () => {
    if (savedCI === undefined) delete process.env.CI;
    else process.env.CI = savedCI;
    await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return { kernels, folders };
}
