/** `plinth auth login | logout | status`: what the CLI shows of sign-ins, never a token. */
import { type CommandSpec, EXIT, formatTable } from 'plinth/sdk';
import type { AuthStatus, LoginResult, LogoutResult, OAuthService, SecretBackendName } from 'plinth/sdk';

const SERVER_ARG = { name: 'server', required: true, description: 'The MCP server, as named in mcpServers' };

const BUILTIN: Readonly<Record<string, string>> = { keychain: 'the OS keychain', file: 'the encrypted file' };

/** A backend as a person reads it: the builtin store's two by name, another store's by its label or name. */
function backendText(backend: SecretBackendName, label?: string): string {
  return BUILTIN[backend] ?? label ?? `"${backend}"`;
}

export function authCommands(service: OAuthService): CommandSpec[] {
  return [
    {
      name: 'auth login',
      args: [SERVER_ARG],
      async run({ args, json, out, signal }) {
        const result = await service.login(args[0]!, { progress: (line) => out.note(line), signal });
        if (json) return out.json(result);
        out.print(loginLine(result));
      },
    },
    {
      name: 'auth logout',
      args: [SERVER_ARG],
      async run({ args, json, out, signal }) {
        const result = await service.logout(args[0]!, { signal });
        if (json) return out.json(result);
        out.print(logoutLine(result));
        return result.revocation === 'failed' ? EXIT.FAILURE : EXIT.OK;
      },
    },
    {
      name: 'auth status',
      args: [{ name: 'server', description: 'Only this server' }],
      async run({ args, json, out }) {
        const [statuses, storage] = await Promise.all([service.status(args[0]), service.storage()]);
        if (json) return out.json({ servers: statuses, storage });
        if (statuses.length === 0) out.print('No remote MCP server is configured and no sign-in is stored.');
        else {
          const rows = statuses.map((s) => [s.server, stateText(s), s.backend ?? '-', s.scope ?? '-', s.expiresAt ?? '-']);
          out.print(formatTable(['SERVER', 'STATE', 'STORED IN', 'SCOPES', 'EXPIRES'], rows));
        }
        const builtin = storage.preferred in BUILTIN;
        const keychain = !builtin || storage.keychain.available ? '' : `; the OS keychain is not used: ${storage.keychain.reason ?? 'unavailable'}`;
        out.print(`New sign-ins are stored in ${backendText(storage.preferred, storage.label)}${keychain}.`);
        for (const s of statuses) if (s.error) out.note(`${s.server}: ${s.error.code}: ${s.error.message}`);
        return statuses.some((s) => s.state === 'unreadable') ? EXIT.FAILURE : EXIT.OK;
      },
    },
  ];
}

function loginLine(result: LoginResult): string {
  const parts = [`Signed in to ${result.server}; tokens stored in ${backendText(result.backend)}`];
  if (result.scope) parts.push(`scopes: ${result.scope}`);
  if (result.expiresAt) parts.push(`access token expires ${result.expiresAt}${result.refreshable ? ', refreshed automatically' : ''}`);
  return `${parts.join('; ')}.`;
}

function logoutLine(result: LogoutResult): string {
  if (!result.removed) return `No sign-in was stored for ${result.server}.`;
  switch (result.revocation) {
    case 'revoked':
      return `Signed out of ${result.server}: the server revoked the tokens and they were deleted here.`;
    case 'unsupported':
      return `Signed out of ${result.server}: tokens deleted here (its authorization server offers no revocation, so they stay valid there until they expire).`;
    case 'failed':
      return `Signed out of ${result.server}: tokens deleted here, but revoking them at the server failed (${result.revocationError ?? 'unknown error'}); they stay valid there until they expire.`;
    default:
      return `Signed out of ${result.server}.`;
  }
}

function stateText(status: AuthStatus): string {
  switch (status.state) {
    case 'signed-in':
      return status.refreshable ? 'signed in' : 'signed in (no refresh)';
    case 'expired':
      return status.refreshable ? 'expired (refreshes on use)' : 'expired: sign in again';
    case 'other-url':
      return 'signed in for another URL: sign in again';
    case 'unreadable':
      return 'unreadable (see below)';
    default:
      return 'signed out';
  }
}
