/**
 * A judge that fails on a schedule (HTTP 500, a timeout, an answer without a verdict) behind the
 * real judge-backed verifiers, a real model server as the judge, simple_agent and the collector:
 * no judge failure is written as a reward (unless the anchor switch scores an answer without a
 * verdict as wrong), each is recorded as `judge_failed` with the verify request, and
 * `ng-reverify +judge_failed_only=true` scores just those rows.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { collectRollouts, type CollectSummary } from '@nemo-gym/core/rollouts';
import { collectViaQueue, runWorker } from '@nemo-gym/queue';
import { findRedisServer, startRedisServer } from '@nemo-gym/queue/redis-server';
import { globalConfigFor, startStubServer, startTestServer, type StubAnswer, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server as equivalence } from '../resources_servers/equivalence_llm_judge/app.js';
import { server as mathWithJudge } from '../resources_servers/math_with_judge/app.js';
import { server as vllmModel } from '../responses_api_models/vllm_model/app.js';
import { server as agent } from '../responses_api_agents/simple_agent/app.js';
import { reverifyCommand } from '../packages/cli/src/commands/reverify.js';
import { runInProcess } from './helpers/cli.js';

type Json = Record<string, any>;
const chat = (content: string) => ({
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});

/** What the judge does for each task (found by its tag in the judge prompt). */
const SCHEDULE = ['equal', 'http_500', 'timeout', 'garbage', 'not_equal', 'equal'] as const;
let healthy = false;

function judgeAnswer(prompt: string): Promise<StubAnswer> | StubAnswer {
  const task = Number(/task(\d+)/.exec(prompt)?.[1] ?? -1);
  const what = healthy ? 'equal' : SCHEDULE[task];
  // The math judge is asked twice (both orders); each verdict label is its template's.
  if (what === 'equal') return { json: chat('They agree. [[A=B]]') };
  if (what === 'not_equal') return { json: chat('They differ. [[A!=B]]') };
  if (what === 'http_500') return { status: 500, json: { error: 'judge backend crashed' } };
  if (what === 'garbage') return { json: chat('I would rather not say.') };
  return new Promise((r) => setTimeout(() => r({ json: chat('[[A=B]]') }), 1500));
}

let policy: StubServer;
let judgeBackend: StubServer;
const servers: TestServer[] = [];
let globalConfig: Record<string, unknown>;
let dir: string;
let input: string;
let resourcesUrls: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ng-judge-failures-'));
  policy = await startStubServer({ '/v1/chat/completions': () => ({ json: chat('The answer is 4.') }) });
  judgeBackend = await startStubServer({
    '/v1/chat/completions': (req) => judgeAnswer(JSON.stringify(req.body?.messages ?? '')),
  });
  const model = (url: string) => ({ base_url: `${url}/v1`, api_key: 'k', model: 'm', return_token_id_information: false, uses_reasoning_parser: false, request_timeout_s: 0.4, max_attempts: 1 });
  const policyModel = await startTestServer(vllmModel, { config: { name: 'policy_model', ...model(policy.url) }, listen: true });
  const judgeModel = await startTestServer(vllmModel, { config: { name: 'judge_model', ...model(judgeBackend.url) }, listen: true });
  servers.push(policyModel, judgeModel);
  const models = globalConfigFor({
    policy_model: { kind: 'responses_api_models', impl: 'vllm_model', port: policyModel.port },
    judge_model: { kind: 'responses_api_models', impl: 'vllm_model', port: judgeModel.port },
  });
  const judgeRef = { type: 'responses_api_models', name: 'judge_model' };
  const resources: Record<string, TestServer> = {
    equiv: await startTestServer(equivalence, {
      config: { name: 'equiv', domain: 'knowledge', judge_model_server: judgeRef, judge_responses_create_params: { input: [] }, judge_prompt_template: 'Q: {question}\nGold: {expected_answer}\nCandidate: {generated_answer}' },
      globalConfig: { ...models, http_retry_max_attempts: 1 },
      listen: true,
    }),
    equiv_anchor: await startTestServer(equivalence, {
      config: {
        name: 'equiv_anchor',
        domain: 'knowledge',
        judge_model_server: judgeRef,
        judge_responses_create_params: { input: [] },
        judge_prompt_template: 'Q: {question}\nGold: {expected_answer}\nCandidate: {generated_answer}',
        unparseable_verdict_is_wrong: true,
      },
      globalConfig: { ...models, http_retry_max_attempts: 1 },
      listen: true,
    }),
    math: await startTestServer(mathWithJudge, {
      config: { name: 'math', domain: 'math', judge_model_server: judgeRef, judge_responses_create_params: { input: [] }, library_verifier_workers: 0 },
      globalConfig: { ...models, http_retry_max_attempts: 1 },
      listen: true,
    }),
  };
  servers.push(...Object.values(resources));
  resourcesUrls = Object.fromEntries(Object.entries(resources).map(([k, s]) => [k, `http://127.0.0.1:${s.port}`]));
  const base = {
    ...models,
    ...globalConfigFor(Object.fromEntries(Object.entries(resources).map(([k, s]) => [k, { kind: 'resources_servers', impl: k === 'math' ? 'math_with_judge' : 'equivalence_llm_judge', port: s.port }]))),
  };
  const agents: Record<string, { kind: 'responses_api_agents'; impl: string; port: number }> = {};
  for (const r of Object.keys(resources)) {
    const a = await startTestServer(agent, {
      config: { name: `${r}_agent`, resources_server: { type: 'resources_servers', name: r }, model_server: { type: 'responses_api_models', name: 'policy_model' } },
      globalConfig: { ...base, http_retry_max_attempts: 1 },
      listen: true,
    });
    servers.push(a);
    agents[`${r}_agent`] = { kind: 'responses_api_agents', impl: 'simple_agent', port: a.port };
  }
  globalConfig = { ...base, ...globalConfigFor(agents) };
  input = join(dir, 'tasks.jsonl');
  // Each task's tag reaches the judge prompt through the question; math's library check says "wrong"
  // (the expected answer is 5), so its judge is always asked.
  const rows = SCHEDULE.map((_, i) => ({ responses_create_params: { input: [{ role: 'user', content: `task${i}: what is 2 + 2?` }] }, question: `task${i}: what is 2 + 2?`, expected_answer: '5' }));
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
});

afterAll(async () => {
  for (const s of servers.reverse()) await s.close();
  await policy?.close();
  await judgeBackend?.close();
});

const readJsonl = (p: string): Json[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Json);

async function collect(agentName: string, out: string): Promise<CollectSummary> {
  const client = new ServerClient({ globalConfig, retry: { maxAttempts: 1 } });
  try {
    return await collectRollouts({ client, inputPath: input, outputPath: out, agentName, concurrency: 3, maxConsecutiveFailures: 0 });
  } finally {
    await client.close();
  }
}

const byTask = (rows: Json[]) => Object.fromEntries(rows.map((r) => [r._ng_task_index, r]));

describe.each([
  ['equivalence_llm_judge', 'equiv'],
  ['math_with_judge', 'math'],
])('%s with a judge failing on a schedule', (_label, name) => {
  it('writes judged rows only; HTTP 500, timeout and no verdict are judge_failed records, never reward 0; reverify +judge_failed_only scores just those', async () => {
    healthy = false;
    const out = join(dir, `${name}.jsonl`);
    const s = await collect(`${name}_agent`, out);
    const rows = byTask(readJsonl(out));
    expect(Object.keys(rows).map(Number).sort()).toEqual([0, 4, 5]);
    expect([rows[0]!.reward, rows[4]!.reward, rows[5]!.reward]).toEqual([1, 0, 1]);
    const failures = readJsonl(join(dir, `${name}_failures.jsonl`));
    expect(failures.map((f) => [f._ng_task_index, f.reason_class]).sort()).toEqual([
      [1, 'judge_failed'],
      [2, 'judge_failed'],
      [3, 'judge_failed'],
    ]);
    // Each record keeps the /verify request (the row and the policy's response) for re-scoring.
    for (const f of failures) {
      expect(f.verify_request.response.output.length).toBeGreaterThan(0);
      expect(f.verify_request.expected_answer).toBe('5');
    }
    expect(s.failuresByReason).toEqual({ 'judge failed': 3 });
    expect(s.metrics.failures_by_reason).toEqual({ 'judge failed': 3 });
    expect((s.metrics.mean as Json).reward).toBeCloseTo(2 / 3);

    // The judge is healthy again: only the three judge failures are sent.
    healthy = true;
    const judgeCallsBefore = judgeBackend.requestsTo('/v1/chat/completions').length;
    const fixed = join(dir, `${name}_fixed.jsonl`);
    const r = await runInProcess(reverifyCommand, [`+input=${out}`, `+output=${fixed}`, `+resources_server_url=${resourcesUrls[name]!}`, '+judge_failed_only=true']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Re-verified 3 of 3 row(s)');
    expect(r.stdout).toContain('scored for the first time: 3');
    const perVerify = name === 'math' ? 2 : 1;
    expect(judgeBackend.requestsTo('/v1/chat/completions').length - judgeCallsBefore).toBe(3 * perVerify);
    const after = readJsonl(fixed);
    // The collected rows come first, untouched; then the re-scored ones with their indices.
    expect(after.slice(0, 3)).toEqual(readJsonl(out));
    expect(after.slice(3).map((x) => [x._ng_task_index, x._ng_rollout_index, x.reward]).sort()).toEqual([
      [1, 0, 1],
      [2, 0, 1],
      [3, 0, 1],
    ]);
  });
});

describe('the anchor switch (unparseable_verdict_is_wrong: true)', () => {
  it('scores an answer without a verdict 0, as upstream 818984b8e did; HTTP 500 and timeouts stay judge failures', async () => {
    healthy = false;
    const out = join(dir, 'anchor.jsonl');
    await collect('equiv_anchor_agent', out);
    const rows = byTask(readJsonl(out));
    expect(Object.keys(rows).map(Number).sort()).toEqual([0, 3, 4, 5]);
    expect(rows[3]!.reward).toBe(0);
    expect(rows[3]!.judge_evaluations[0].verdict_label).toBeNull();
    expect(readJsonl(join(dir, 'anchor_failures.jsonl')).map((f) => [f._ng_task_index, f.reason_class]).sort()).toEqual([
      [1, 'judge_failed'],
      [2, 'judge_failed'],
    ]);
  });
});

describe.skipIf(findRedisServer().path === null)('through the Redis queue', () => {
  it('a worker records the judge failures with their verify request; the collector writes judged rows only', async () => {
    healthy = false;
    const redis = await startRedisServer();
    const client = new ServerClient({ globalConfig, retry: { maxAttempts: 1 } });
    const stop = new AbortController();
    try {
      const worker = runWorker({ client, queueUrl: redis.url, queue: 'judge', concurrency: 3, leaseMs: 5000, signal: stop.signal });
      const out = join(dir, 'queue.jsonl');
      const s = await collectViaQueue({ queueUrl: redis.url, queue: 'judge', inputPath: input, outputPath: out, agentName: 'equiv_agent' });
      stop.abort();
      await worker;
      expect(Object.keys(byTask(readJsonl(out))).map(Number).sort()).toEqual([0, 4, 5]);
      expect(s.failuresByReason).toEqual({ 'judge failed': 3 });
      const failures = readJsonl(join(dir, 'queue_failures.jsonl'));
      expect(failures.map((f) => [f._ng_task_index, f.reason_class, f.verify_request?.expected_answer]).sort()).toEqual([
        [1, 'judge_failed', '5'],
        [2, 'judge_failed', '5'],
        [3, 'judge_failed', '5'],
      ]);
    } finally {
      stop.abort();
      await client.close();
      await redis.stop();
    }
  }, 60_000);
});
