/**
 * The grants side of the sandbox: what a principal is allowed (stored and
 * session grants, `sandbox.default`, the prompt), decided before every
 * confined launch and every in-process capability check.
 */
export { createGrantPolicy, grantCommand, type ExtendedGrantPolicy, type GrantPolicyOptions, type Standing } from './policy.js';
export { GrantStore, grantsFile, storeGrant, type StoredGrant } from './store.js';
export { type PermissionItem, formatItem, itemsOf, parseItem, widening, withItems, withoutItems } from './items.js';
export { GRANT_QUESTION, askGrant, grantQuestionText, type GrantAnswer } from './ask.js';
export { readDefaultMode, type DefaultMode } from './default-mode.js';
export { createCapabilityCheck, type CapabilityCheckOptions } from './capabilities.js';
export { registerGrants, type RegisterGrantsOptions } from './register.js';
export { createGrantsService, type GrantsServiceOptions } from './service.js';
