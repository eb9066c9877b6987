/**
 * The secrets service's errors: each names the file or the keychain call that
 * failed, never a value, and says what to do.
 */
import { PlinthError } from 'plinth/sdk';

/** The codes the secrets service raises (causes may carry the sdk's `PLN_E_FILE_…`). */
export type SecretsErrorCode =
  | 'PLN_E_SECRETS_TAMPERED'
  | 'PLN_E_SECRETS_WRONG_KEY'
  | 'PLN_E_SECRETS_KEY_MISSING'
  | 'PLN_E_SECRETS_CORRUPT'
  | 'PLN_E_SECRETS_INSECURE'
  | 'PLN_E_SECRETS_KEYCHAIN';

export interface SecretsErrorOptions {
  readonly hint: string;
  readonly details?: Record<string, unknown>;
  readonly cause?: unknown;
}

export function secretsError(code: SecretsErrorCode, message: string, options: SecretsErrorOptions): PlinthError {
  return new PlinthError(code, message, {
    plugin: 'oauth',
    hint: options.hint,
    ...(options.details && { details: options.details }),
    ...(options.cause !== undefined && { cause: options.cause }),
  });
}
