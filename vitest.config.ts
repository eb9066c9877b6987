import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Child processes and real servers: give slow shared machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
