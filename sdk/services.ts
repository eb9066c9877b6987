/**
 * Typed services. A plugin that provides a service describes its type by
 * merging into `Services`:
 *
 * @example
 * declare module 'plinth/sdk' {
 *   interface Services {
 *     'transport:stdio': TransportFactory;
 *   }
 * }
 */

// Declaration merging needs an interface; it starts empty on purpose.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Services {}

/** A service name: a known one from `Services`, or any other string. */
export type ServiceName = keyof Services | (string & {});

/** The type of a service: from `Services` when declared there, otherwise `unknown`. */
export type ServiceType<K> = K extends keyof Services ? Services[K] : unknown;
