/** The trust plugin's service contract lives in the sdk (`plinth/sdk`); re-exported for this plugin's own modules. */
export type { CheckOptions, TrustRun, TrustService, TrustSource, TrustSubject, TrustVerdict } from 'plinth/sdk';
