/** Typed services: names and types from the `Services` interface (declared in sdk/index.ts). */
import type { Services } from './index.js';

/** A service name: a known one from `Services`, or any other string. */
export type ServiceName = keyof Services | (string & {});

/** The type of a service: from `Services` when declared there, otherwise `unknown`. */
export type ServiceType<K> = K extends keyof Services ? Services[K] : unknown;

/**
 * What {@link optionalService} needs of a kernel: the `kernel` a plugin's `setup` receives, or a host's `Kernel`.
 */
export interface ServiceSource {
  /** The service `name`, as `PluginKernel.get` gives it. */
  get<K extends ServiceName>(name: K): Promise<ServiceType<K>>;
}

/**
 * A service when a plugin provides it; undefined when none is installed or
 * enabled (`PLN_E_SERVICE_MISSING`). Any other failure (a provider that cannot
 * load) is thrown: a broken optional service is not an absent one.
 */
export async function optionalService<K extends ServiceName>(kernel: ServiceSource, name: K): Promise<ServiceType<K> | undefined> {
  try {
    return await kernel.get(name);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'PLN_E_SERVICE_MISSING') return undefined;
    throw error;
  }
}
