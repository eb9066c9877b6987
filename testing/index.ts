/**
 * plinth/testing: what a plugin's own tests import. Apart from `plinth/sdk`
 * because it boots a whole kernel, and the sdk never imports the kernel.
 *
 * @packageDocumentation
 * @module plinth/testing
 */
export { createTestKernel } from './test-kernel.js';
export type { TestKernel, TestKernelOptions } from './test-kernel.js';
