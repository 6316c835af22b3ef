/**
 * The environment end to end, as a user runs it: ng-run starts google_search, simple_agent and a
 * replay model; ng-collect-rollouts sends two of our example rows. The model's recorded turns call
 * `search` (answered by a local fake of the Custom Search API) and `browse` (a local page, its
 * address allow-listed), then box an answer. Only 127.0.0.1 is contacted: no DNS lookup happens.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, startStack } from '../../../tests/helpers/stack.js';
import { serve, type LocalServer } from './local.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const examples = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, any>);

let google: LocalServer;
let pages: LocalServer;
beforeAll(async () => {
  google = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(fixture('google_answer.json'));
  });
  pages = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(fixture('pages/news_article.html'));
  });
});
afterAll(async () => {
  await google.close();
  await pages.close();
});

let n = 0;
const call = (name: string, args: Record<string, string>) => {
  n++;
  return [
    { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name, arguments: JSON.stringify(args), status: 'completed' },
    { type: 'function_call_output', call_id: `call_${n}`, output: '(recorded tool output, not compared)' },
  ];
};
const answer = (text: string) => ({
  type: 'message', id: `msg_${++n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});
const recording = (row: Record<string, any>, output: unknown[]) => ({
  responses_create_params: row.responses_create_params,
  response: { id: `resp_${n}`, created_at: 0, model: 'replayed', object: 'response', output, parallel_tool_calls: false, tool_choice: 'auto', tools: row.responses_create_params.tools },
  reward: 0,
});

describe('ng-run + ng-collect-rollouts with google_search', () => {
  it('runs search and browse through the agent and scores the boxed answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-google-search-'));
    const [first, second] = examples as [Record<string, any>, Record<string, any>];
    const recordings = join(dir, 'recordings.jsonl');
    writeFileSync(
      recordings,
      [
        recording(first, [...call('search', { query: 'tidal stream power cube of speed' }), ...call('browse', { url: `${pages.origin}/article` }), answer(`Power goes with speed cubed.\n\\boxed{${first.expected_answer}}`)]),
        recording(second, [...call('search', { query: 'Berry phase gauge invariance' }), answer(`\\[\n\\boxed{\\text{${second.expected_answer}}}\n\\]`)]),
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    const input = join(dir, 'input.jsonl');
    writeFileSync(input, `${JSON.stringify(first)}\n${JSON.stringify(second)}\n`);
    const own = 'google_search.resources_servers.google_search';
    const stack = await startStack([
      '+config_paths=[resources_servers/google_search/configs/google_search.yaml,responses_api_models/replay_model/configs/replay_model.yaml]',
      `++policy_model.responses_api_models.replay_model.recordings_jsonl_fpaths=[${recordings}]`,
      `++${own}.google_api_key=stack-test-key`,
      `++${own}.google_cx=stack-test-cx`,
      `++${own}.google_search_url=${google.origin}/customsearch/v1`,
      `++${own}.browse_allowed_networks=[127.0.0.1]`,
    ]);
    try {
      const out = join(dir, 'rollouts.jsonl');
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, '+agent_name=google_search_simple_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${out}`]);
      expect(r.code, r.stderr + stack.output()).toBe(0);
      const rows = readFileSync(out, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
      expect(rows).toHaveLength(2);
      const byQuestion = (row: Record<string, any>) => rows.find((o) => o.responses_create_params.input === row.responses_create_params.input)!;
      const a = byQuestion(first);
      const b = byQuestion(second);
      expect([a.reward, a.parsed_option]).toEqual([1, first.expected_answer]);
      // The repr-based parse upstream's rewards depend on: \boxed{\text{C}} gives \\text{C.
      expect([b.reward, b.parsed_option]).toEqual([0, `\\\\text{${second.expected_answer}`]);

      const outputs = a.response.output.filter((o: any) => o.type === 'function_call_output').map((o: any) => JSON.parse(o.output));
      expect(outputs[0].search_results).toBe(fixture('google_answer.pydumps.txt').toString('utf8'));
      expect(outputs[1].page_content).toContain('have now generated electricity through ten consecutive winters');
      expect(outputs[1].page_content).not.toContain('We use cookies');
      expect(google.seen).toHaveLength(2);
      expect(new URL(google.seen[0]!.url, 'http://x').searchParams.get('q')).toBe('tidal stream power cube of speed');
      expect(pages.seen).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain('stack-test-key');
    } finally {
      await stack.stop();
    }
  }, 120_000);

  it('without google_api_key, ng-run stops with a message naming the key and env.yaml', async () => {
    const err = await startStack([
      '+config_paths=[resources_servers/google_search/configs/google_search.yaml,responses_api_models/replay_model/configs/replay_model.yaml]',
      '++google_search.resources_servers.google_search.google_cx=cx-only',
    ]).then(
      async (stack) => {
        await stack.stop();
        return null;
      },
      (e: unknown) => e as Error,
    );
    expect(err).not.toBeNull();
    expect(err!.message).toMatch(/google_api_key: missing: the google search backend needs google_api_key\. Put it in env\.yaml/);
    expect(err!.message).not.toMatch(/google_cx: missing/);
  }, 120_000);
});
