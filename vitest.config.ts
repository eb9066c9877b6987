import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // A test that imports a builtin plugin's module by path gets, for `plinth/sdk`, the package's own
    // export (dist/sdk); `plinth/internal` is not exported, so it is the build's copy beside it.
    alias: { 'plinth/internal': fileURLToPath(new URL('./dist/internal/index.js', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Child processes and real servers: give slow shared machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Vitest's default is one worker fewer than the cores: one on CI's two. The suite mostly waits
    // on child processes and servers, so two files at a time nearly halve it (19.7 → ~11 min).
    maxWorkers: 2,
  },
});
