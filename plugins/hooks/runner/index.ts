/** The hook runner: whitelist, environment, spawn and persistent modes. */
export { DEFAULT_ALLOWED_COMMANDS, DEFAULT_MAX_OUTPUT_BYTES, createRunner } from './runner.js';
export type { RunnerOptions } from './runner.js';
