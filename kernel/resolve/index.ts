/** Plugin resolution: which plugins load, in which order, and why the others do not (`plinth plugins why` explains it: plugins/inspect). */
export { resolve } from './resolve.js';
export type { ResolveInput } from './types.js';
