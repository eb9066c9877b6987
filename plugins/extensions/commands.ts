/** `plinth ext list | info | enable | disable | config | link | unlink`, on the `extensions` service. */
import { type CommandInput, type CommandSpec, EXIT, type ExtensionScope, type ExtensionsService, PlinthError, type SettingDecl, safeLine } from 'plinth/sdk';
import { GRANT_OPTION, type GrantsService, grantReviewLines } from 'plinth/internal';
import { detailsText, extensionTable, liveLines, settingLine, settingsTable } from './format.js';
import { settingValue } from './setting-values.js';

const SCOPE_OPTION = {
  type: 'string',
  short: 's',
  value: '<scope>',
  description: 'Which settings file: user ($PLINTH_HOME/settings.json, the default) or workspace (.plinth/settings.json; "project" is the same)',
} as const;

const NAME_ARG = { name: 'name', required: true, description: 'A plugin name (`plinth ext list` lists them)' } as const;

export interface CommandsOptions {
  readonly service: ExtensionsService;
  /** The declared settings of a plugin, for reading a value typed on the command line. */
  readonly decl: (plugin: string, setting: string) => Promise<SettingDecl>;
  /** Reads a value from standard input (`plinth ext config <name> <setting> -`). */
  readonly stdin?: () => Promise<string>;
  /** The `grants` service when a plugin provides it (the sandbox): an enabled plugin's permissions are asked about at once. */
  readonly grants?: () => Promise<GrantsService | undefined>;
}

export function extensionCommands({ service, decl, stdin = readStdin, grants }: CommandsOptions): CommandSpec[] {
  return [
    {
      name: 'ext list',
      async run({ json, out }) {
        const list = await service.list();
        if (json) return out.json(list);
        out.print(list.length === 0 ? 'No plugins found.' : extensionTable(list));
      },
    },
    {
      name: 'ext info',
      args: [NAME_ARG],
      async run({ args, json, out }) {
        const details = await service.info(args[0]!);
        if (json) return out.json(details);
        out.print(detailsText(details));
      },
    },
    toggleCommand('enable', service, grants),
    toggleCommand('disable', service),
    {
      name: 'ext config',
      args: [NAME_ARG, { name: 'setting', description: 'A setting the plugin declares' }, { name: 'value', description: 'Its new value ("-": read it from standard input, so that a secret stays out of your shell history)' }],
      options: { unset: { type: 'boolean', description: 'Remove the setting\'s value from the file (and a sensitive one from the secret store)' }, scope: SCOPE_OPTION },
      async run({ args, options, json, out }) {
        const [name = '', setting, text] = args;
        const scope = scopeOf(options.scope);
        if (setting === undefined) {
          if (options.unset === true) throw usage('--unset needs the setting to remove');
          const settings = await service.settings(name);
          if (json) return out.json({ name, settings });
          out.print(settings.length === 0 ? `"${name}" declares no settings.` : settingsTable(settings));
          return;
        }
        if (options.unset === true) {
          if (text !== undefined) throw usage('--unset takes no value');
          const result = await service.unset(name, setting, { scope });
          if (json) return out.json(result);
          out.print(`Removed ${name}.${setting} from ${result.scope} settings ${safeLine(result.file)}${result.stored === 'secrets' ? ' and the secret store' : ''}.`);
          out.print(`Now: ${settingLine(name, result.setting)}.`);
          return;
        }
        if (text === undefined) {
          const view = (await service.settings(name)).find((s) => s.name === setting);
          if (!view) await decl(name, setting); // throws the coded "no such setting"
          if (json) return out.json({ name, setting: view });
          out.print(settingLine(name, view!));
          return;
        }
        const raw = text === '-' ? (await stdin()).replace(/\r?\n$/, '') : text;
        const value = settingValue(name, await decl(name, setting), raw);
        const result = await service.configure(name, setting, value, { scope });
        if (json) return out.json(result);
        if (result.stored === 'secrets') out.print(`Stored ${name}.${setting} in the secret store (referenced from ${safeLine(result.file)}); its value is shown as [redacted] everywhere.`);
        else out.print(`Set ${settingLine(name, result.setting)}.`);
        out.print('It takes effect when the plugin starts next.');
      },
    },
    {
      name: 'ext link',
      args: [{ name: 'dir', required: true, description: 'The plugin folder (holding manifest.json)' }],
      async run({ args, json, out }) {
        const result = await service.link(args[0]!);
        if (json) return out.json(result);
        out.print(`Linked ${result.name}@${result.version} from ${safeLine(result.dir)} (recorded in ${safeLine(result.file)}).`);
        if (result.replacedLink) out.print(`It replaces the earlier link of "${result.name}" to ${safeLine(result.replacedLink)}.`);
        if (result.shadows) out.print(`It takes precedence over the ${result.shadows.source} plugin ${result.shadows.name}@${result.shadows.version} (${result.shadows.dir ? safeLine(result.shadows.dir) : 'in memory'}) until \`plinth ext unlink ${result.name}\`.`);
        for (const line of liveLines(result.live)) out.print(line);
        return result.live && result.live.failed.length > 0 ? EXIT.FAILURE : EXIT.OK;
      },
    },
    {
      name: 'ext unlink',
      args: [{ name: 'name', required: true, description: 'The linked plugin\'s name (or its folder)' }],
      async run({ args, json, out }) {
        const result = await service.unlink(args[0]!);
        if (json) return out.json(result);
        out.print(`Unlinked ${result.name} (${safeLine(result.dir)}).`);
        if (result.fallback) out.print(`The ${result.fallback.source} plugin ${result.fallback.name}@${result.fallback.version} (${result.fallback.dir ? safeLine(result.fallback.dir) : 'in memory'}) is used again.`);
        for (const line of liveLines(result.live)) out.print(line);
        return result.live && result.live.failed.length > 0 ? EXIT.FAILURE : EXIT.OK;
      },
    },
  ];
}

function toggleCommand(verb: 'enable' | 'disable', service: ExtensionsService, grants?: CommandsOptions['grants']): CommandSpec {
  return {
    name: `ext ${verb}`,
    args: [NAME_ARG],
    options: {
      scope: SCOPE_OPTION,
      ...(verb === 'enable' && GRANT_OPTION),
    },
    async run({ args, options, json, out, signal }: CommandInput) {
      const name = args[0]!;
      const result = await service[verb](name, { scope: scopeOf(options.scope) });
      // Enabled: what it declares is asked about now, while the user is here (the sandbox's grants).
      if (verb === 'enable') for (const line of grantReviewLines(await (await grants?.())?.review(name, { signal, grant: options.grant === true }))) out.note(line);
      if (json) return out.json(result);
      const done = verb === 'enable' ? 'Enabled' : 'Disabled';
      out.print(result.changed ? `${done} ${name} in ${result.scope} settings ${safeLine(result.file)}.` : `${name} was already ${verb}d in ${result.scope} settings ${safeLine(result.file)}.`);
      // A running kernel's report names what stopped or started; without one, what will at the next start.
      if (result.live) for (const line of liveLines(result.live)) out.print(line);
      else if (result.dependents.length > 0) out.print(`${verb === 'disable' ? 'These depend on it and stop with it' : 'Back with it'}: ${result.dependents.join(', ')}.`);
      for (const note of result.notes) out.note(`note: ${note}`);
      return result.live && result.live.failed.length > 0 ? EXIT.FAILURE : EXIT.OK;
    },
  };
}

function scopeOf(value: unknown): ExtensionScope {
  if (value === undefined || value === 'user') return 'user';
  if (value === 'workspace' || value === 'project') return 'workspace';
  throw usage(`unknown scope "${String(value)}": expected user or workspace`);
}

function usage(message: string): PlinthError {
  return new PlinthError('PLN_E_CLI_USAGE', message, { plugin: 'extensions', hint: 'see `plinth ext --help`' });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
