// The harness CLIs harness_agent knows: where each one's binary is, the config it gets per
// rollout (written into the rollout's private home folder), its command line, and how its
// output stream becomes Responses output items.
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { functionCall, messageItem } from '@nemo-gym/core/openai';
import type { RequestShim } from './bridge.js';
import { HarnessError } from './errors.js';

type Json = Record<string, unknown>;

export type PresetName = 'codex' | 'claude_code' | 'opencode' | 'generic';

/** The pinned versions (devDependencies of this package; bump both together). */
export const PINNED_VERSIONS = { codex: '0.171.0', claude_code: '2.1.332', opencode: '1.18.33' } as const;

export interface LaunchContext {
  instruction: string;
  /** The repository folder (the harness's working folder). */
  repoDir: string;
  /** The rollout's private home folder: every config file and state the harness keeps. */
  homeDir: string;
  /** The model's base URL, ending in `/v1`. */
  baseUrl: string;
  /** The per-rollout dummy key (never the policy's real key). */
  apiKey: string;
  model: string;
  /** The program to run (resolved binary, or the configured command). */
  program: string;
  /** Extra arguments from the config (before the instruction). */
  extraArgs: string[];
}

export interface Launch {
  argv: string[];
  env: Record<string, string>;
  /** Files written under the home folder before the run (relative paths). */
  files: Record<string, string>;
  /** Folders put before the standard PATH. */
  path: string[];
}

export interface HarnessTranscript {
  /** Responses output items rebuilt from the harness's own event stream. */
  output: Json[];
  /** The harness's final answer, when it gives one. */
  finalText: string | null;
  usage: { input_tokens: number; output_tokens: number };
  /** Errors the harness reported in its stream. */
  errors: string[];
}

export interface Preset {
  name: PresetName;
  /** The platform binary from this package's pinned devDependency; null when not installed. */
  binary(): string | null;
  launch(ctx: LaunchContext): Launch;
  parse(stdout: string): HarnessTranscript;
  /** Rewrites the harness's JSON requests on their way to the model server. */
  shim?: RequestShim;
}

const here = createRequire(import.meta.url);

/** The folder of package `name` as seen from package `from` (a folder), or null. */
function packageDir(name: string, from?: string): string | null {
  try {
    const req = from ? createRequire(join(from, 'package.json')) : here;
    return realpathSync(dirname(req.resolve(`${name}/package.json`)));
  } catch {
    return null;
  }
}

const ARCH: Record<string, string> = { x64: 'x64', arm64: 'arm64' };

/** `<pkg>-<platform>-<arch>` shipped as an optional dependency of `<pkg>`. */
function platformBinary(pkg: string, platformPkg: (p: string, a: string) => string, file: (dir: string, a: string) => string): string | null {
  const arch = ARCH[process.arch];
  if (process.platform !== 'linux' || !arch) return null;
  const main = packageDir(pkg);
  if (!main) return null;
  const dir = packageDir(platformPkg(process.platform, arch), main);
  if (!dir) return null;
  const path = file(dir, arch);
  return existsSync(path) ? path : null;
}

function parseLines(stdout: string): Json[] {
  const out: Json[] = [];
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Json);
    } catch {
      // not an event line
    }
  }
  return out;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A tool call and its output as a function_call + function_call_output pair. */
function toolPair(output: Json[], id: string, name: string, args: unknown, result: string): void {
  output.push(functionCall(name, args, id, { call_id: id }));
  output.push({ type: 'function_call_output', call_id: id, output: result, status: 'completed' });
}

function reasoningItem(id: string, text: string): Json {
  return { type: 'reasoning', id, summary: [{ type: 'summary_text', text }], status: 'completed' };
}

function tomlValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  throw new HarnessError(`no TOML form for a ${typeof v} value in a Codex config`);
}

/** The TOML subset Codex's config uses: scalars and arrays at the top, nested tables. */
export function toToml(obj: Json, prefix = ''): string {
  const lines: string[] = [];
  const tables: Array<[string, Json]> = [];
  for (const [k, v] of Object.entries(obj)) {
    if (v && typeof v === 'object' && !Array.isArray(v)) tables.push([prefix ? `${prefix}.${k}` : k, v as Json]);
    else lines.push(`${k} = ${tomlValue(v)}`);
  }
  let text = lines.join('\n');
  for (const [name, t] of tables) text += `${text ? '\n\n' : ''}[${name}]\n${toToml(t, name).replace(/^\n+/, '')}`;
  return text;
}

// ---- Codex -------------------------------------------------------------------------------

/** Codex's own bookkeeping (window, session, turn and installation ids) sent beside each
 * Responses request: not model input, and a field our model servers refuse (422). */
const CODEX_ONLY_FIELDS = ['client_metadata'];

export const codexPreset: Preset = {
  name: 'codex',
  shim: (path, body) => {
    if (!path.endsWith('/responses')) return body;
    const out = { ...body };
    for (const k of CODEX_ONLY_FIELDS) delete out[k];
    return out;
  },
  binary: () => platformBinary('@openai/codex', (p, a) => `@openai/codex-${p}-${a}`, (d, a) => join(d, 'vendor', `${a === 'x64' ? 'x86_64' : 'aarch64'}-unknown-linux-musl`, 'bin', 'codex')),
  launch(ctx) {
    const config = {
      model: ctx.model,
      model_provider: 'ng',
      approval_policy: 'never',
      // Our sandbox is the boundary; Codex's own (bubblewrap / Landlock) would nest inside it.
      sandbox_mode: 'danger-full-access',
      web_search: 'disabled',
      check_for_update_on_startup: false,
      analytics: { enabled: false },
      history: { persistence: 'none' },
      agents: { enabled: false },
      features: { code_mode: false },
      model_providers: { ng: { name: 'ng', base_url: ctx.baseUrl, env_key: 'OPENAI_API_KEY', wire_api: 'responses', request_max_retries: 0, stream_max_retries: 0 } },
    };
    const codexHome = join(ctx.homeDir, '.codex');
    // Codex's ripgrep sits beside its binary (the npm wrapper puts it on PATH).
    const rgDir = join(dirname(dirname(ctx.program)), 'codex-path');
    return {
      argv: [ctx.program, 'exec', '--json', '--ephemeral', '--skip-git-repo-check', '--cd', ctx.repoDir, ...ctx.extraArgs, '--', ctx.instruction],
      env: { CODEX_HOME: codexHome, OPENAI_API_KEY: ctx.apiKey },
      files: { '.codex/config.toml': `${toToml(config)}\n` },
      path: existsSync(rgDir) ? [rgDir] : [],
    };
  },
  parse(stdout) {
    const output: Json[] = [];
    const errors: string[] = [];
    const usage = { input_tokens: 0, output_tokens: 0 };
    let finalText: string | null = null;
    for (const ev of parseLines(stdout)) {
      if (ev.type === 'turn.completed') {
        const u = (ev.usage ?? {}) as Json;
        usage.input_tokens += num(u.input_tokens);
        usage.output_tokens += num(u.output_tokens);
      } else if (ev.type === 'turn.failed') {
        errors.push(str(((ev.error ?? {}) as Json).message) || 'turn failed');
      } else if (ev.type === 'error') {
        errors.push(str(ev.message) || 'error');
      } else if (ev.type === 'item.completed' && ev.item && typeof ev.item === 'object') {
        const item = ev.item as Json;
        const id = str(item.id) || `item_${output.length}`;
        switch (item.type) {
          case 'agent_message':
            finalText = str(item.text);
            output.push(messageItem(finalText, { id }));
            break;
          case 'reasoning':
            if (str(item.text)) output.push(reasoningItem(id, str(item.text)));
            break;
          case 'command_execution': {
            const code = item.exit_code;
            const out = str(item.aggregated_output);
            toolPair(output, id, 'exec_command', { cmd: str(item.command) }, typeof code === 'number' && code !== 0 ? `${out}\n[exit code: ${code}]` : out);
            break;
          }
          case 'file_change':
            toolPair(output, id, 'apply_patch', { changes: item.changes ?? [] }, str(item.status) || 'completed');
            break;
          case 'mcp_tool_call':
            toolPair(output, id, str(item.tool), item.arguments ?? {}, str(item.result));
            break;
          case 'error':
            // Codex reports config deprecations and fallbacks as error items; they do not end the run.
            break;
          default:
            break;
        }
      }
    }
    return { output, finalText, usage, errors };
  },
};

// ---- Claude Code -------------------------------------------------------------------------

const CLAUDE_QUIET: Record<string, string> = {
  CLAUDE_CODE_ENABLE_TELEMETRY: '0',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  CLAUDE_CODE_ATTRIBUTION_HEADER: '0',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_BUG_COMMAND: '1',
};

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return str(content);
  return (content as Json[]).map((c) => (c.type === 'text' ? str(c.text) : '')).join('');
}

export const claudeCodePreset: Preset = {
  name: 'claude_code',
  binary: () => platformBinary('@anthropic-ai/claude-code', (p, a) => `@anthropic-ai/claude-code-${p}-${a}`, (d) => join(d, 'claude')),
  launch(ctx) {
    const configDir = join(ctx.homeDir, '.claude');
    return {
      argv: [ctx.program, '-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--model', ctx.model, ...ctx.extraArgs, '--', ctx.instruction],
      env: {
        ...CLAUDE_QUIET,
        // Claude Code appends /v1/messages itself.
        ANTHROPIC_BASE_URL: ctx.baseUrl.replace(/\/v1\/?$/, ''),
        ANTHROPIC_API_KEY: ctx.apiKey,
        ANTHROPIC_MODEL: ctx.model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: ctx.model,
        ANTHROPIC_DEFAULT_SONNET_MODEL: ctx.model,
        ANTHROPIC_DEFAULT_OPUS_MODEL: ctx.model,
        CLAUDE_CODE_SUBAGENT_MODEL: ctx.model,
        CLAUDE_CONFIG_DIR: configDir,
        // --dangerously-skip-permissions is refused for root unless the CLI is told it is sandboxed.
        IS_SANDBOX: '1',
      },
      files: { '.claude/settings.json': `${JSON.stringify({ env: CLAUDE_QUIET }, null, 2)}\n` },
      path: [],
    };
  },
  parse(stdout) {
    const output: Json[] = [];
    const errors: string[] = [];
    const usage = { input_tokens: 0, output_tokens: 0 };
    let finalText: string | null = null;
    const pending = new Map<string, { name: string; input: unknown }>();
    for (const ev of parseLines(stdout)) {
      const message = (ev.message ?? {}) as Json;
      const content = Array.isArray(message.content) ? (message.content as Json[]) : [];
      if (ev.type === 'assistant') {
        for (const block of content) {
          const id = str(block.id) || `blk_${output.length}`;
          if (block.type === 'text' && str(block.text)) output.push(messageItem(str(block.text), { id: str(message.id) || id }));
          else if (block.type === 'thinking' && str(block.thinking)) output.push(reasoningItem(`rs_${output.length}`, str(block.thinking)));
          else if (block.type === 'tool_use') pending.set(id, { name: str(block.name), input: block.input ?? {} });
        }
      } else if (ev.type === 'user') {
        for (const block of content) {
          if (block.type !== 'tool_result') continue;
          const id = str(block.tool_use_id);
          const call = pending.get(id);
          pending.delete(id);
          toolPair(output, id, call?.name ?? 'unknown', call?.input ?? {}, blockText(block.content));
        }
      } else if (ev.type === 'result') {
        const u = (ev.usage ?? {}) as Json;
        usage.input_tokens += num(u.input_tokens);
        usage.output_tokens += num(u.output_tokens);
        if (ev.is_error === true || (typeof ev.subtype === 'string' && ev.subtype.startsWith('error'))) errors.push(str(ev.result) || str(ev.subtype));
        else if (typeof ev.result === 'string') finalText = ev.result;
      }
    }
    // A tool call the run ended on (no result came back).
    for (const [id, call] of pending) output.push(functionCall(call.name, call.input, id, { call_id: id }));
    return { output, finalText, usage, errors };
  },
};

// ---- OpenCode ----------------------------------------------------------------------------

const OPENCODE_QUIET: Record<string, string> = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  OPENCODE_DISABLE_PROJECT_CONFIG: '1',
};

export const opencodePreset: Preset = {
  name: 'opencode',
  binary: () => platformBinary('opencode-ai', (p, a) => `opencode-${p}-${a}`, (d) => join(d, 'bin', 'opencode')),
  launch(ctx) {
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: `ng/${ctx.model}`,
      // @ai-sdk/openai-compatible is bundled in the binary: nothing is downloaded.
      provider: { ng: { npm: '@ai-sdk/openai-compatible', name: 'NeMo Gym', options: { baseURL: ctx.baseUrl, apiKey: ctx.apiKey }, models: { [ctx.model]: { name: ctx.model } } } },
      permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' },
    };
    const h = ctx.homeDir;
    return {
      argv: [ctx.program, 'run', '--pure', '--format', 'json', '--auto', '-m', `ng/${ctx.model}`, '--dir', ctx.repoDir, ...ctx.extraArgs, ctx.instruction],
      env: {
        ...OPENCODE_QUIET,
        OPENCODE_CONFIG: join(h, 'opencode.json'),
        XDG_CONFIG_HOME: join(h, '.config'),
        XDG_DATA_HOME: join(h, '.local/share'),
        XDG_CACHE_HOME: join(h, '.cache'),
        XDG_STATE_HOME: join(h, '.local/state'),
      },
      files: { 'opencode.json': `${JSON.stringify(config, null, 2)}\n` },
      path: [],
    };
  },
  parse(stdout) {
    const output: Json[] = [];
    const errors: string[] = [];
    const usage = { input_tokens: 0, output_tokens: 0 };
    let finalText: string | null = null;
    for (const ev of parseLines(stdout)) {
      const part = (ev.part ?? {}) as Json;
      if (ev.type === 'text' && str(part.text)) {
        finalText = str(part.text);
        output.push(messageItem(finalText, { id: str(part.id) || `msg_${output.length}` }));
      } else if (ev.type === 'reasoning' && str(part.text)) {
        output.push(reasoningItem(str(part.id) || `rs_${output.length}`, str(part.text)));
      } else if (ev.type === 'tool_use') {
        const state = (part.state ?? {}) as Json;
        const id = str(part.callID) || str(part.id) || `call_${output.length}`;
        toolPair(output, id, str(part.tool), state.input ?? {}, state.status === 'error' ? `error: ${str(state.error)}` : str(state.output));
      } else if (ev.type === 'step_finish') {
        const t = (part.tokens ?? {}) as Json;
        usage.input_tokens += num(t.input);
        usage.output_tokens += num(t.output);
      } else if (ev.type === 'error') {
        const e = (ev.error ?? {}) as Json;
        errors.push(str(((e.data ?? {}) as Json).message) || str(e.name) || 'error');
      }
    }
    return { output, finalText, usage, errors };
  },
};

// ---- Any command reading OPENAI_BASE_URL / OPENAI_API_KEY --------------------------------

export const genericPreset: Preset = {
  name: 'generic',
  binary: () => null,
  launch(ctx) {
    return {
      argv: [ctx.program, ...ctx.extraArgs.map((a) => a.replaceAll('{instruction}', ctx.instruction))],
      env: { OPENAI_BASE_URL: ctx.baseUrl, OPENAI_API_KEY: ctx.apiKey, OPENAI_MODEL: ctx.model, NG_INSTRUCTION: ctx.instruction },
      files: {},
      path: [],
    };
  },
  parse(stdout) {
    const text = stdout.trim();
    return { output: text ? [messageItem(text, { id: 'msg_final' })] : [], finalText: text || null, usage: { input_tokens: 0, output_tokens: 0 }, errors: [] };
  },
};

export const PRESETS: Record<PresetName, Preset> = { codex: codexPreset, claude_code: claudeCodePreset, opencode: opencodePreset, generic: genericPreset };
