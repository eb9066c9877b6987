/** Tests of code that may ask on a terminal: here it never has one. */
import { afterEach, beforeEach, vi } from 'vitest';

/**
 * For every test of the file: stdin is no terminal and `CI` is empty, so
 * plinth decides as it does without a terminal (refuses, names the command)
 * and nothing waits for an answer, whatever runs the tests.
 */
export function withoutTerminal(): void {
  let stdinTTY: PropertyDescriptor | undefined;
  beforeEach(() => {
    stdinTTY = Object.getOwnPropertyDescriptor(process.stdin, 'isTTY');
    Object.defineProperty(process.stdin, 'isTTY', { value: false, configurable: true, writable: true });
    vi.stubEnv('CI', '');
  });
  afterEach(() => {
    if (stdinTTY) Object.defineProperty(process.stdin, 'isTTY', stdinTTY);
    else delete (process.stdin as { isTTY?: boolean }).isTTY;
    vi.unstubAllEnvs();
  });
}
