import { defineConfig } from 'vitest/config';

export default defineConfig({
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
