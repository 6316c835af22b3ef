// Parsers on event streams recorded from real runs of the pinned CLIs (tests/fixtures/*.jsonl:
// each CLI against the scripted model, asked to create FIXED.txt), the per-rollout config each
// preset writes, rollout ids, and when a finished run counts as a failure.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runFailure, type HarnessRun } from '../src/harness.js';
import { claudeCodePreset, codexPreset, genericPreset, opencodePreset, toToml, type LaunchContext } from '../src/presets.js';
import { RolloutIdError } from '@nemo-gym/core/errors';
import { modelBaseUrl, rolloutIdentity } from '@nemo-gym/core/capture';
import { checkRelativePath, instructionOf } from '../src/workspace.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const ctx: LaunchContext = { instruction: 'Fix it', repoDir: '/w/repo', homeDir: '/w/home', baseUrl: 'http://127.0.0.1:4000/v1', apiKey: 'ng-harness-abc', model: 'policy', program: '/bin/harness', extraArgs: [] };

describe('event streams recorded from the pinned CLIs', () => {
  it('codex exec --json: the shell call, its output and the final message; config deprecation notices are not errors', () => {
    const t = codexPreset.parse(fixture('codex-0.171.0.jsonl'));
    expect(t.output.map((o) => o.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(t.output[0]).toMatchObject({ name: 'exec_command', call_id: 'item_3' });
    expect(JSON.parse(String(t.output[0]!.arguments))).toEqual({ cmd: "/bin/bash -lc 'echo fixed > FIXED.txt'" });
    expect(t.finalText).toBe('Fixed; the tests pass now.');
    expect(t.usage).toEqual({ input_tokens: 20, output_tokens: 10 });
    expect(t.errors).toEqual([]);
  });

  it('claude -p --output-format stream-json: tool_use joined with its tool_result; the result line is the answer', () => {
    const t = claudeCodePreset.parse(fixture('claude-code-2.1.332.jsonl'));
    expect(t.output.map((o) => o.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(t.output[0]).toMatchObject({ name: 'Bash' });
    expect(JSON.parse(String(t.output[0]!.arguments)).command).toBe('echo fixed > FIXED.txt');
    expect(t.output[1]).toMatchObject({ type: 'function_call_output', output: '(Bash completed with no output)' });
    expect(t.finalText).toBe('Fixed; the tests pass now.');
    expect(t.usage.input_tokens).toBe(20);
  });

  it('opencode run --format json: tool parts, text parts and step tokens; an error event is reported', () => {
    const t = opencodePreset.parse(fixture('opencode-1.18.33.jsonl'));
    expect(t.output.map((o) => o.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(t.output[0]).toMatchObject({ name: 'bash' });
    expect(t.finalText).toBe('Fixed; the tests pass now.');
    expect(t.usage).toEqual({ input_tokens: 20, output_tokens: 10 });
    const bad = opencodePreset.parse(fixture('opencode-1.18.33-unreachable.jsonl'));
    expect(bad.errors).toEqual(['Cannot connect to API: Was there a typo in the url or port?']);
    expect(bad.finalText).toBeNull();
  });

  it('lines that are not JSON objects are skipped, not fatal', () => {
    expect(codexPreset.parse('Reading additional input from stdin...\n[1,2]\n{"type":"turn.failed","error":{"message":"boom"}}\n').errors).toEqual(['boom']);
  });
});

describe('per-rollout configuration', () => {
  it('codex: its own provider at the model URL, the key from OPENAI_API_KEY, no approvals, its sandbox off, nothing phoning home', () => {
    const l = codexPreset.launch(ctx);
    const toml = l.files['.codex/config.toml']!;
    expect(toml).toContain('model_provider = "ng"');
    expect(toml).toContain('approval_policy = "never"');
    expect(toml).toContain('sandbox_mode = "danger-full-access"');
    expect(toml).toContain('check_for_update_on_startup = false');
    expect(toml).toMatch(/\[model_providers\.ng\]\nname = "ng"\nbase_url = "http:\/\/127\.0\.0\.1:4000\/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"/);
    expect(toml).toContain('[analytics]\nenabled = false');
    expect(l.env).toMatchObject({ CODEX_HOME: '/w/home/.codex', OPENAI_API_KEY: 'ng-harness-abc' });
    expect(l.argv).toEqual(['/bin/harness', 'exec', '--json', '--ephemeral', '--skip-git-repo-check', '--cd', '/w/repo', '--', 'Fix it']);
    expect(codexPreset.shim!('/v1/responses', { model: 'p', client_metadata: { a: '1' }, input: [] })).toEqual({ model: 'p', input: [] });
    expect(codexPreset.shim!('/v1/models', { client_metadata: 1 })).toEqual({ client_metadata: 1 });
  });

  it('claude_code: ANTHROPIC_BASE_URL without /v1, the dummy key, telemetry and updates off, every model tier mapped to ours', () => {
    const l = claudeCodePreset.launch(ctx);
    expect(l.env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:4000', ANTHROPIC_API_KEY: 'ng-harness-abc', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'policy', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', CLAUDE_CONFIG_DIR: '/w/home/.claude' });
    expect(l.argv.slice(0, 6)).toEqual(['/bin/harness', '-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
    expect(JSON.parse(l.files['.claude/settings.json']!).env.CLAUDE_CODE_ENABLE_TELEMETRY).toBe('0');
  });

  it('opencode: an OpenAI-compatible provider in a config file outside the repository; no downloads', () => {
    const l = opencodePreset.launch(ctx);
    const cfg = JSON.parse(l.files['opencode.json']!);
    expect(cfg.provider.ng).toMatchObject({ npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:4000/v1', apiKey: 'ng-harness-abc' } });
    expect(cfg.model).toBe('ng/policy');
    expect(l.env).toMatchObject({ OPENCODE_CONFIG: '/w/home/opencode.json', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1' });
    expect(l.argv).toContain('--auto');
  });

  it('generic: OPENAI_BASE_URL / OPENAI_API_KEY, {instruction} in the arguments, stdout as the answer', () => {
    const l = genericPreset.launch({ ...ctx, extraArgs: ['run.py', '--task={instruction}'] });
    expect(l.argv).toEqual(['/bin/harness', 'run.py', '--task=Fix it']);
    expect(l.env).toMatchObject({ OPENAI_BASE_URL: 'http://127.0.0.1:4000/v1', OPENAI_API_KEY: 'ng-harness-abc' });
    expect(genericPreset.parse('  done\n').finalText).toBe('done');
  });

  it('toToml writes nested tables after the scalars', () => {
    expect(toToml({ a: 1, b: 'x"y', c: [true], t: { d: false, u: { e: 2 } } })).toBe('a = 1\nb = "x\\"y"\nc = [true]\n\n[t]\nd = false\n\n[t.u]\ne = 2');
  });
});

describe('rollout ids and model URLs', () => {
  it('explicit _ng_rollout_id, else <task>-<repeat> with -a<n> for a re-dispatch; malformed ids refused', () => {
    // Upstream's keys (the collector sends them): `_ng_attempt_index` n > 0 adds `-a<n>`.
    expect(rolloutIdentity({ _ng_rollout_id: 'abc-1' })).toEqual({ id: 'abc-1', derived: true });
    expect(rolloutIdentity({ _ng_task_index: 3, _ng_rollout_index: 1 }).id).toBe('3-1');
    expect(rolloutIdentity({ _ng_task_index: 3, _ng_rollout_index: 1, _ng_attempt_index: 0 }).id).toBe('3-1');
    expect(rolloutIdentity({ _ng_task_index: 3, _ng_rollout_index: 1, _ng_attempt_index: 1 }).id).toBe('3-1-a1');
    expect(rolloutIdentity({}).derived).toBe(false);
    for (const bad of ['../x', '', 'a b', 'x'.repeat(201), 7]) expect(() => rolloutIdentity({ _ng_rollout_id: bad })).toThrow(RolloutIdError);
  });

  it('the base URL is <server>/v1, or /ng-rollout/<id>/v1 once per-rollout routes are on', () => {
    expect(modelBaseUrl('http://h:1/', '3-1', { perRolloutRoutes: false })).toBe('http://h:1/v1');
    expect(modelBaseUrl('http://h:1', '3-1-a1', { perRolloutRoutes: true })).toBe('http://h:1/ng-rollout/3-1-a1/v1');
  });
});

describe('rows', () => {
  it('the instruction: `instruction`, else the request instructions and user messages', () => {
    expect(instructionOf({ instruction: 'do x' })).toBe('do x');
    expect(instructionOf({ responses_create_params: { instructions: 'sys', input: [{ role: 'user', content: [{ type: 'input_text', text: 'task' }] }, { role: 'assistant', content: 'no' }] } })).toBe('sys\n\ntask');
    expect(() => instructionOf({ responses_create_params: { input: [] } })).toThrow(/nothing to do/);
  });

  it('workspace paths stay inside the repository', () => {
    expect(checkRelativePath('a/b.py', 'f')).toBe('a/b.py');
    for (const bad of ['/etc/passwd', '../x', 'a/../../x', '.git/hooks/pre-commit', '.']) expect(() => checkRelativePath(bad, 'f')).toThrow(/relative path/);
  });
});

describe('which finished runs are failures', () => {
  const base: HarnessRun = { exitCode: 0, signal: null, timedOut: false, truncated: false, durationMs: 1, stdout: '', stderr: '', patch: '', transcript: { output: [], finalText: 'ok', usage: { input_tokens: 0, output_tokens: 0 }, errors: [] }, modelCalls: 1 };
  it('timeout, output cap, non-zero exit, nothing produced; an answer or a diff alone is enough', () => {
    expect(runFailure({ ...base, timedOut: true, exitCode: null }, 5, 10)).toMatch(/timed out after 5 s/);
    expect(runFailure({ ...base, truncated: true }, 5, 10)).toMatch(/more than max_output_bytes \(10 bytes\)/);
    expect(runFailure({ ...base, exitCode: null, signal: 'SIGKILL' }, 5, 10)).toMatch(/signal SIGKILL/);
    expect(runFailure({ ...base, exitCode: 2, transcript: { ...base.transcript, errors: ['model said no'] } }, 5, 10)).toMatch(/code 2: model said no/);
    expect(runFailure({ ...base, transcript: { ...base.transcript, finalText: null } }, 5, 10)).toMatch(/no answer and changed no file/);
    expect(runFailure({ ...base, transcript: { ...base.transcript, finalText: null }, patch: 'diff --git a/x b/x' }, 5, 10)).toBeNull();
    expect(runFailure(base, 5, 10)).toBeNull();
  });
});
