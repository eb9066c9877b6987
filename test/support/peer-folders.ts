/**
 * Peer folders as their authors write them, for tests: a Claude Code plugin
 * (`.claude-plugin/plugin.json`, `.mcp.json`, `hooks/hooks.json`, and parts plinth
 * does not run) and a Gemini CLI extension (`gemini-extension.json` with servers,
 * settings, excludeTools, a context file and a theme, and `hooks/hooks.json`). Each
 * server is the real server-everything, started through a script in the folder
 * that the peer's own variable names.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const everything = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

/** Writes `content` (JSON unless a string) at `file`, making its folders. */
export async function write(file: string, content: unknown, mode = 0o644): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2), { mode });
}

/** A script in the peer's folder that runs server-everything over stdio: the peer's variable must name the folder for it to start. */
const startScript = `await import(${JSON.stringify(pathToFileURL(everything).href)});\n`;


/** A Claude Code plugin as its docs show one: plugin.json, .mcp.json, hooks/hooks.json, and parts plinth does not run. */
export async function claudePlugin(dir: string): Promise<void> {
  await write(join(dir, '.claude-plugin', 'plugin.json'), {
    name: 'claude-demo',
    description: 'A Claude Code plugin',
    author: { name: 'Someone' },
    userConfig: { region: { type: 'string', title: 'Region', description: 'Where to run', default: 'eu-1' } },
  });
  await write(join(dir, '.mcp.json'), {
    mcpServers: {
      'claude-everything': {
        command: process.execPath,
        args: ['${CLAUDE_PLUGIN_ROOT}/servers/start.mjs'],
        env: { REGION: '${user_config.region}' },
      },
    },
  });
  await write(join(dir, 'servers', 'start.mjs'), startScript);
  await write(join(dir, 'hooks', 'hooks.json'), {
    description: 'guards the echo tool of its own server',
    hooks: { PreToolUse: [{ matcher: 'mcp__claude-everything__.*', hooks: [{ type: 'command', command: '"${CLAUDE_PLUGIN_ROOT}"/hooks/guard.sh', timeout: 10 }] }] },
  });
  // As Claude Code's hooks reference writes one: bash and jq, exit 2 with the reason on stderr.
  await write(
    join(dir, 'hooks', 'guard.sh'),
    [
      '#!/bin/bash',
      'input=$(cat)',
      'message=$(echo "$input" | jq -r \'.tool_input.message // empty\')',
      'if [[ "$message" == *forbidden* ]]; then',
      '  echo "blocked by $(basename "$CLAUDE_PLUGIN_ROOT"): $(echo "$input" | jq -r .tool_name)" >&2',
      '  exit 2',
      'fi',
      'exit 0',
      '',
    ].join('\n'),
    0o755,
  );
  await write(join(dir, 'commands', 'deploy.md'), '---\ndescription: Deploy\n---\nDeploy it.\n');
  await write(join(dir, 'skills', 'review', 'SKILL.md'), '---\nname: review\n---\nReview.\n');
  await write(join(dir, 'agents', 'reviewer.md'), '---\ndescription: reviews\n---\n');
}

/** A Gemini CLI extension as its reference shows one. */
export async function geminiExtension(dir: string): Promise<void> {
  await write(join(dir, 'gemini-extension.json'), {
    name: 'gemini-demo',
    version: '1.2.0',
    description: 'A Gemini CLI extension',
    mcpServers: {
      'gemini-everything': { command: process.execPath, args: ['${extensionPath}${/}servers${/}start.mjs'], cwd: '${extensionPath}', env: { PROJECT: '${workspacePath}' } },
    },
    settings: [{ name: 'Greeting', description: 'Said first', envVar: 'GEMINI_DEMO_GREETING', sensitive: false }],
    excludeTools: ['get-tiny-image', 'run_shell_command(rm -rf)'],
    contextFileName: 'GEMINI.md',
    themes: [{ name: 'green', type: 'custom' }],
  });
  await write(join(dir, 'GEMINI.md'), '# Context\n');
  await write(join(dir, 'servers', 'start.mjs'), startScript);
  await write(join(dir, 'hooks', 'hooks.json'), {
    hooks: { BeforeTool: [{ matcher: 'mcp_gemini-everything_echo', hooks: [{ type: 'command', command: 'node ${extensionPath}${/}hooks${/}guard.js', timeout: 5000 }] }] },
  });
  // As Gemini CLI's hooks reference writes one: JSON on stdin, a JSON decision on stdout.
  await write(
    join(dir, 'hooks', 'guard.js'),
    [
      "let text = '';",
      "process.stdin.on('data', (chunk) => (text += chunk));",
      "process.stdin.on('end', () => {",
      '  const input = JSON.parse(text);',
      "  const denied = String(input.tool_input?.message ?? '').includes('forbidden');",
      "  process.stdout.write(JSON.stringify(denied ? { decision: 'deny', reason: `gemini-demo refuses ${input.tool_name} in ${input.hook_event_name}` } : { decision: 'allow' }));",
      '});',
      '',
    ].join('\n'),
  );
  await write(join(dir, 'commands', 'greet.toml'), 'prompt = "Say hello"\n');
}

