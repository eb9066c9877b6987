/**
 * The kernel API version: what a manifest's `kernel` range is checked against.
 * It changes with the plugin-facing API, not with every package release.
 */
export const KERNEL_API_VERSION = '1.0.0';
