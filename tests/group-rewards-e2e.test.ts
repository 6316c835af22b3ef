/**
 * The two group-scored environments end to end: ng-run starts group_judge and genrm_compare with
 * simple_agent and openai_model; ng-collect-rollouts runs their example tasks with num_repeats 8,
 * locally and through Redis (ng-collect-worker). The policy and the judges are one stub backend on
 * 127.0.0.1: the policy states a quality `q=<x>` in each answer, the judges score by it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubServer, textResponse, type StubRequest, type StubServer } from '@nemo-gym/core/testing';
import { findRedisServer, startRedisServer, type LocalRedis } from '@nemo-gym/queue/redis-server';
import { BIN, ROOT, runCommand, startStack, type Stack } from './helpers/stack.js';

const GJ = 'resources_servers/group_judge';
const GC = 'resources_servers/genrm_compare';
const MODEL = 'responses_api_models/openai_model/configs/openai_model.yaml';
const rows = (p: string) => readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
const qOf = (text: string) => Number(/q=([\d.]+)/.exec(text)?.[1] ?? NaN);

let policyCalls = 0;
/** While set, the policy answers 5 requests of a task whose text contains `[hold]` and holds the others unanswered. */
let holding = true;
const held: (() => void)[] = [];
const answeredOf = new Map<string, number>();
async function backend(req: StubRequest) {
  const input = req.body.input as { role: string; content: string }[];
  const last = input.at(-1)!.content;
  if (last.includes('<trajectory id=')) {
    const scores = [...last.matchAll(/<trajectory id="(\d+)">\n([\s\S]*?)\n<\/trajectory>/g)].map(([, id, body]) => ({ trajectory_id: id, explanation: 'stub', score: qOf(body!) }));
    return { json: textResponse(JSON.stringify({ scores })) };
  }
  if (last.includes('<response_1>')) {
    const a = qOf(/<response_1>\n([\s\S]*?)\n<\/response_1>/.exec(last)![1]!);
    const b = qOf(/<response_2>\n([\s\S]*?)\n<\/response_2>/.exec(last)![1]!);
    return { json: textResponse(`{"score_1": ${1 + 4 * a}, "score_2": ${1 + 4 * b}, "ranking": ${a > b ? 2 : a < b ? 5 : 3.5}}`) };
  }
  if (last.includes('[hold]') && holding) {
    const n = answeredOf.get(last) ?? 0;
    if (n >= 5) await new Promise<void>((r) => held.push(r));
    else answeredOf.set(last, n + 1);
  }
  return { json: textResponse(`q=${(policyCalls++ % 8) / 8} my answer`) };
}

let model: StubServer;
let stack: Stack;
beforeAll(async () => {
  model = await startStubServer({ '/v1/responses': backend });
  stack = await startStack([`+config_paths=[${GJ}/configs/group_judge.yaml,${GC}/configs/genrm_compare.yaml,${MODEL}]`, `+policy_base_url=${model.url}/v1`, '+policy_api_key=sk-stub-0000', '+policy_model_name=stub'], 90_000);
}, 120_000);
afterAll(async () => {
  holding = false;
  for (const r of held.splice(0)) r();
  await stack?.stop();
  await model?.close();
});

const judgeCalls = (marker: string) => model.requestsTo('/v1/responses').filter((r) => (r.body.input as { content: string }[]).at(-1)!.content.includes(marker));

function checkGroupJudge(out: string): void {
  const got = rows(out);
  expect(got).toHaveLength(40);
  for (const r of got) {
    // RULER-style: the group reward is the judge's score of this rollout's own answer.
    expect(r.reward).toBe(qOf(r.response.output.at(-1).content[0].text));
    expect(r.verify_reward).toBe(r.reward);
    expect(r.group_verify).toMatchObject({ members: 8, num_repeats: 8, judge_explanation: 'stub' });
  }
  const metrics = JSON.parse(readFileSync(out.replace(/\.jsonl$/, '_metrics.json'), 'utf8'));
  expect(metrics.rows).toBe(40);
}

function checkGenrm(out: string): void {
  const got = rows(out);
  expect(got).toHaveLength(40);
  for (let t = 0; t < 5; t++) {
    const group = got.filter((r) => r._ng_task_index === t);
    expect(group).toHaveLength(8);
    for (const r of group) {
      expect(r.verify_reward).toBe(3);
      expect(r.group_verify.members).toBe(8);
      expect(r.reward).toBeGreaterThanOrEqual(0);
    }
    // The best answer of the group gets the highest reward.
    const best = group.reduce((a, b) => (qOf(b.response.output.at(-1).content[0].text) > qOf(a.response.output.at(-1).content[0].text) ? b : a));
    expect(best.reward).toBe(Math.max(...group.map((r) => r.reward)));
  }
}

describe('group-scored environments through ng-collect-rollouts, num_repeats 8', () => {
  it('locally: group_judge and genrm_compare', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-group-e2e-'));
    const before = { ruler: judgeCalls('<trajectory id="8">').length, genrm: judgeCalls('<response_1>').length };
    for (const [agent, data, file] of [['group_judge_simple_agent', GJ, 'gj.jsonl'], ['genrm_compare_simple_agent', GC, 'gc.jsonl']] as const) {
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${data}/data/example.jsonl`, `+output_jsonl_fpath=${join(dir, file)}`, '+num_repeats=8']);
      expect(r.code, r.stderr + r.stdout).toBe(0);
    }
    checkGroupJudge(join(dir, 'gj.jsonl'));
    checkGenrm(join(dir, 'gc.jsonl'));
    // One group prompt per task (8 trajectories), 8 circular comparisons per task.
    expect(judgeCalls('<trajectory id="8">').length - before.ruler).toBe(5);
    expect(judgeCalls('<response_1>').length - before.genrm).toBe(40);
  }, 120_000);

  const redisBin = findRedisServer();
  describe.skipIf(redisBin.path === null)('through Redis', () => {
    let redis: LocalRedis;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('group_judge and genrm_compare with an ng-collect-worker', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ng-group-e2e-q-'));
      const worker = spawn(process.execPath, [BIN('collect-worker'), `+queue_url=${redis.url}`, '+queue_name=groups', `+head_server.port=${stack.headPort}`, '+head_server.host=127.0.0.1', '+num_samples_in_parallel=32', '+idle_exit_s=3'], { cwd: ROOT, stdio: 'ignore' });
      const exited = new Promise((r) => worker.once('exit', r));
      try {
        for (const [agent, data, file] of [['group_judge_simple_agent', GJ, 'gj.jsonl'], ['genrm_compare_simple_agent', GC, 'gc.jsonl']] as const) {
          const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+queue_url=${redis.url}`, '+queue_name=groups', `+agent_name=${agent}`, `+input_jsonl_fpath=${data}/data/example.jsonl`, `+output_jsonl_fpath=${join(dir, file)}`, '+num_repeats=8']);
          expect(r.code, r.stderr + r.stdout).toBe(0);
        }
        checkGroupJudge(join(dir, 'gj.jsonl'));
        checkGenrm(join(dir, 'gc.jsonl'));
      } finally {
        if (worker.exitCode === null) worker.kill('SIGTERM');
        await exited;
      }
    }, 120_000);
  });
});

/** Group prompts (more than one trajectory) the judge got for the task whose text contains `marker`. */
const groupPrompts = (marker: string) => judgeCalls('<trajectory id="2">').filter((r) => (r.body.input as { content: string }[]).at(-1)!.content.includes(marker)).length;

/** Runs ng-collect-rollouts and SIGKILLs it once `ready()` holds. */
function killWhen(args: string[], ready: () => boolean): Promise<number | null> {
  const proc = spawn(process.execPath, [BIN('collect-rollouts'), ...args], { cwd: ROOT, stdio: 'ignore' });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code, signal) => r(signal === 'SIGKILL' ? -9 : code)));
  const timer = setInterval(() => {
    if (ready()) proc.kill('SIGKILL');
  }, 20);
  return exited.finally(() => clearInterval(timer));
}

describe('a collector killed (SIGKILL) mid-group, then run again: every group scored exactly once', () => {
  const redisBin = findRedisServer();
  for (const mode of ['local', 'redis'] as const) {
    it.skipIf(mode === 'redis' && redisBin.path === null)(mode, async () => {
      let redis: LocalRedis | null = null;
      let worker: ReturnType<typeof spawn> | null = null;
      const tag = `run-${mode}-${Date.now()}`;
      const dir = mkdtempSync(join(tmpdir(), 'ng-group-kill-'));
      const input = join(dir, 'in.jsonl');
      const tasks = ['first', 'second [hold]', 'third'].map((t) => `${tag}: ${t}`);
      writeFileSync(input, tasks.map((t) => `${JSON.stringify({ responses_create_params: { input: [{ role: 'user', content: t }] } })}\n`).join(''));
      const out = join(dir, 'out.jsonl');
      const args = [`+head_server.port=${stack.headPort}`, '+agent_name=group_judge_simple_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${out}`, '+num_repeats=8'];
      try {
        if (mode === 'redis') {
          redis = await startRedisServer();
          args.push(`+queue_url=${redis.url}`, `+queue_name=${tag}`);
          worker = spawn(process.execPath, [BIN('collect-worker'), `+queue_url=${redis.url}`, `+queue_name=${tag}`, `+head_server.port=${stack.headPort}`, '+head_server.host=127.0.0.1', '+num_samples_in_parallel=32'], { cwd: ROOT, stdio: 'ignore' });
        }
        holding = true;
        // Killed once the two other groups are written and the held task's group holds 5 finished members and waits for 3.
        const code = await killWhen(args, () => existsSync(out) && rows(out).length === 16 && held.length === 3);
        expect(code).toBe(-9);
        expect(new Set(rows(out).map((r) => r._ng_task_index))).toEqual(new Set([0, 2]));
        holding = false;
        for (const r of held.splice(0)) r();
        const again = await runCommand('collect-rollouts', args);
        expect(again.code, again.stderr + again.stdout).toBe(0);
        const got = rows(out);
        expect(got).toHaveLength(24);
        expect(new Set(got.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`)).size).toBe(24);
        for (const r of got) expect(r.group_verify.members).toBe(8);
        for (const t of tasks) expect(groupPrompts(t), t).toBe(1);
        // The held task's rollouts: locally the 5 finished ones died with the collector and run again
        // (5 + 3 + 8); through Redis the rerun reads them again from the results stream (5 + 3).
        const policyCalls = model.requestsTo('/v1/responses').filter((r) => (r.body.input as { content: string }[]).at(-1)!.content === tasks[1]).length;
        expect(policyCalls).toBe(mode === 'local' ? 16 : 8);
      } finally {
        holding = false;
        for (const r of held.splice(0)) r();
        if (worker && worker.exitCode === null) {
          worker.kill('SIGTERM');
          await new Promise((r) => worker!.once('exit', r));
        }
        await redis?.stop();
      }
    }, 120_000);
  }
});
