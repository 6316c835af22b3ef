import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareDataFlags, prepareDataMain } from '../src/commands/prepare-data.js';

const dirs: string[] = [];

/** Runs ng-prepare-data on `config`, expecting exit code 0; returns what it logged. */
async function preparing(config: Record<string, unknown>): Promise<string[]> {
  const logs: string[] = [];
  const orig = console.log;
  console.log = (...a: unknown[]) => void logs.push(a.join(' '));
  try {
    expect(await prepareDataMain(config)).toBe(0);
  } finally {
    console.log = orig;
  }
  return logs;
}
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

describe('ng-prepare-data flags', () => {
  it('requires output_dirpath and a known mode, and parses should_download', () => {
    expect(() => prepareDataFlags({ mode: 'example_validation' })).toThrow(/\+output_dirpath=/);
    expect(() => prepareDataFlags({ output_dirpath: 'o' })).toThrow(/\+mode=train_preparation or \+mode=example_validation/);
    expect(() => prepareDataFlags({ output_dirpath: 'o', mode: 'training' })).toThrow(/got "training"/);
    expect(() => prepareDataFlags({ output_dirpath: 'o', mode: 'train_preparation', should_download: 'maybe' })).toThrow(/not a boolean/);
    expect(prepareDataFlags({ output_dirpath: 'o', mode: 'train_preparation', should_download: 'true' })).toEqual({
      output_dirpath: 'o',
      mode: 'train_preparation',
      should_download: true,
    });
  });

  it('runs example validation on a merged config and returns exit code 0', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ng-cli-prep-'));
    dirs.push(cwd);
    mkdirSync(join(cwd, 'data'));
    const path = join(cwd, 'data/example.jsonl');
    writeFileSync(path, `${JSON.stringify({ responses_create_params: { input: 'hello there' }, answer: 'x' })}\n`);
    const config = {
      output_dirpath: join(cwd, 'out'),
      mode: 'example_validation',
      agent: { responses_api_agents: { simple_agent: { entrypoint: 'app.ts', datasets: [{ name: 'example', type: 'example', jsonl_fpath: path }] } } },
    };
    const logs = await preparing(config);
    expect(readFileSync(join(cwd, 'out/example.jsonl'), 'utf8')).toBe(
      '{"responses_create_params": {"input": "hello there"}, "answer": "x", "agent_ref": {"type": "responses_api_agents", "name": "agent"}}\n',
    );
    expect(logs.join('\n')).toContain('# Finished!');
  });

  it("checks rows against their resources server's verify request and tools: a misspelt field is left out and named, a row without tools is warned about", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ng-cli-prep-'));
    dirs.push(cwd);
    const path = join(cwd, 'example.jsonl');
    const row = (extra: Record<string, unknown>, tools = true) => ({
      responses_create_params: { input: 'q', ...(tools ? { tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: true }] } : {}) },
      ...extra,
    });
    // math_with_judge takes question and expected_answer; its config here needs no judge.
    writeFileSync(path, [row({ question: 'q', expected_answer: '1' }), row({ question: 'q', expected_anwser: '1' }), row({ question: 'q', expected_answer: '2' }, false)].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const config = {
      output_dirpath: join(cwd, 'out'),
      mode: 'example_validation',
      math: { resources_servers: { math_with_judge: { entrypoint: 'app.ts', domain: 'math', should_use_judge: false } } },
      agent: {
        responses_api_agents: {
          simple_agent: {
            entrypoint: 'app.ts',
            resources_server: { type: 'resources_servers', name: 'math' },
            model_server: { type: 'responses_api_models', name: 'policy_model' },
            datasets: [{ name: 'example', type: 'example', jsonl_fpath: path }],
          },
        },
      },
    };
    const logs = await preparing(config);
    const text = logs.join('\n');
    expect(text).toContain(
      "line 2: expected_answer: missing: resources server `math`'s verify request requires `expected_answer`; the row has `expected_anwser` (did you mean `expected_answer`?)",
    );
    // math_with_judge has no tools: no tool warning for it.
    expect(text).not.toContain('offer none of');
    expect(readFileSync(join(cwd, 'out/example.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
  });
});
