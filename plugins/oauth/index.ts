/**
 * The oauth plugin: OAuth 2.0 + PKCE sign-in for remote MCP servers. Provides
 * `secrets` (the OS keychain when a probe shows it works, else an AES-256-GCM
 * file) and `oauth` (the SDK auth provider the mcp plugin hands to remote
 * transports, and sign-in, sign-out, status). Lazy: a process that connects
 * only to local servers never loads it, and one whose remote servers have no
 * stored sign-in never touches the keychain.
 */
import { type PluginKernel, definePlugin } from 'plinth/sdk';
import { authCommands } from './commands.js';
import { TokenVault } from './record.js';
import { createSecretStore } from './secrets/store.js';
import { createOAuthService } from './service.js';
import { oauthSettings } from './settings.js';
import type { SecretStore } from 'plinth/sdk';

export default definePlugin({
  setup(kernel, ctx) {
    const settings = oauthSettings(ctx.settings);
    kernel.provide(
      'secrets',
      createSecretStore({
        home: ctx.paths.home,
        storage: settings.storage,
        keychainModule: settings.keychainModule,
        probeTimeoutMs: settings.probeTimeoutMs,
        keychainTimeoutMs: settings.keychainTimeoutMs,
        log: ctx.log,
        launcher: () => kernel.get('launcher'),
      }),
    );
    const secrets = chosenSecretStore(kernel);
    const service = createOAuthService({ kernel, secrets, vault: new TokenVault(secrets, ctx.paths.home, settings.requestTimeoutMs), settings, log: ctx.log, launcher: () => kernel.get('launcher') });
    kernel.provide('oauth', service);
    kernel.hooks.commands.tap((registry) => {
      for (const command of authCommands(service)) registry.add(command);
    });
  },
});

/** Tokens go to whichever `secrets` provider the settings choose (this plugin's own by default), looked up on first use. */
function chosenSecretStore(kernel: Pick<PluginKernel, 'get'>): SecretStore {
  let chosen: Promise<SecretStore> | undefined;
  const store = () => (chosen ??= kernel.get('secrets'));
  return {
    get: async (key) => (await store()).get(key),
    set: async (key, value) => (await store()).set(key, value),
    delete: async (key) => (await store()).delete(key),
    where: async (key) => (await store()).where(key),
    keys: async (prefix) => (await store()).keys(prefix),
    describe: async () => (await store()).describe(),
  };
}
