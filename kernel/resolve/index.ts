/** Plugin resolution: which plugins load, in which order, and why the others do not. */
export { resolve } from './resolve.js';
export { explain } from './explain.js';
export type { ResolveInput } from './types.js';
export type { CandidateExplanation, CandidateStatus, DependencyExplanation, Explanation } from './explain.js';
