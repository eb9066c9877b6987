/** Typed services: names and types from the `Services` interface (declared in sdk/index.ts). */
import type { Services } from './index.js';

/** A service name: a known one from `Services`, or any other string. */
export type ServiceName = keyof Services | (string & {});

/** The type of a service: from `Services` when declared there, otherwise `unknown`. */
export type ServiceType<K> = K extends keyof Services ? Services[K] : unknown;
