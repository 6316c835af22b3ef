/**
 * Group rewards (docs/group-rewards.md): the collector holds the rollouts of one task, sends them to
 * the resources server's /verify_group together and writes one reward per member; a member that
 * fails or never finishes, an interrupted collector and the Redis queue. The agent and the group
 * verifier are real HTTP stubs on 127.0.0.1 (the verifier's reward is a function of each member's
 * answer, so it is deterministic); the end-to-end runs at the bottom use the real servers.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { globalConfigFor, startStubServer, type StubServer } from '@nemo-gym/core/testing';
import { collectViaQueue, runWorker } from '@nemo-gym/queue';
import { findRedisServer, startRedisServer, type LocalRedis } from '@nemo-gym/queue/redis-server';
import { BIN, runCommand, startStack } from './helpers/stack.js';

const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>) : []);
const tmp = () => mkdtempSync(join(tmpdir(), 'ng-group-'));

function inputFile(tasks: number): string {
  const input = join(tmp(), 'in.jsonl');
  writeFileSync(input, Array.from({ length: tasks }, (_, i) => `${JSON.stringify({ responses_create_params: { input: `task ${i}` } })}\n`).join(''));
  return input;
}

/** The answer of rollout (task, repeat): its quality is a function of both, so is the group reward. */
const quality = (t: number, r: number) => ((t * 3 + r * 5) % 8) / 8;

interface Agent {
  stub: StubServer;
  /** Rollouts whose /run is held until released (never answered otherwise). */
  hold: Set<string>;
  release: () => void;
}

async function stubAgent(): Promise<Agent> {
  const hold = new Set<string>();
  const waiting: (() => void)[] = [];
  const stub = await startStubServer({
    '/run': async (req) => {
      const t = req.body._ng_task_index as number;
      const r = req.body._ng_rollout_index as number;
      if (hold.has(`${t}:${r}`)) await new Promise<void>((resolve) => waiting.push(resolve));
      return { json: { responses_create_params: req.body.responses_create_params, response: { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `q=${quality(t, r)}` }] }] }, reward: 0.5 } };
    },
  });
  return {
    stub,
    hold,
    release: () => {
      hold.clear();
      for (const w of waiting.splice(0)) w();
    },
  };
}

/** A group verifier: each member's reward is the quality its answer states; it records each group it scored. */
async function stubGroupVerifier(): Promise<StubServer> {
  return startStubServer({
    '/verify_group': (req) => ({
      json: {
        members: (req.body.members as { member_id: string; response: { output: { content: { text: string }[] }[] } }[]).map((m) => ({
          member_id: m.member_id,
          reward: Number(m.response.output[0]!.content[0]!.text.slice(2)),
          note: `scored ${m.member_id}`,
        })),
      },
    }),
  });
}

function clientFor(agent: StubServer, verifier: StubServer, group: Record<string, unknown> = {}): ServerClient {
  return new ServerClient({
    globalConfig: globalConfigFor({
      judge_agent: { kind: 'responses_api_agents', impl: 'stub', port: agent.port, resources_server: { type: 'resources_servers', name: 'grouper' } },
      grouper: { kind: 'resources_servers', impl: 'stub', port: verifier.port, verify_group: true, group_wait_timeout_s: 30, ...group },
    }) as never,
    retry: { maxAttempts: 2 },
  });
}

const groupsScored = (verifier: StubServer) => verifier.requestsTo('/verify_group').map((r) => r.body.task_index as number);

function expectScored(rows: Record<string, any>[], tasks: number, repeats: number): void {
  expect(rows).toHaveLength(tasks * repeats);
  const keys = new Set(rows.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`));
  expect(keys.size).toBe(tasks * repeats);
  for (const row of rows) {
    expect(row.reward).toBe(quality(row._ng_task_index, row._ng_rollout_index));
    expect(row.verify_reward).toBe(0.5);
    expect(row.group_verify).toMatchObject({ member_id: `${row._ng_task_index}-${row._ng_rollout_index}`, members: repeats, num_repeats: repeats });
  }
}

describe('group verify through the local collector', () => {
  it('scores each group of num_repeats once, one reward per member, whatever order the members finished in', async () => {
    const agent = await stubAgent();
    const verifier = await stubGroupVerifier();
    try {
      const out = join(tmp(), 'out.jsonl');
      const s = await collectRollouts({ client: clientFor(agent.stub, verifier), inputPath: inputFile(4), outputPath: out, agentName: 'judge_agent', numRepeats: 8, concurrency: 13 });
      expect(s.failed).toBe(0);
      expectScored(lines(out), 4, 8);
      expect(groupsScored(verifier).sort()).toEqual([0, 1, 2, 3]);
      // The members of a group are sent together; the metrics see the group rewards.
      for (const req of verifier.requestsTo('/verify_group')) expect(req.body.members).toHaveLength(8);
      const metrics = JSON.parse(readFileSync(out.replace(/\.jsonl$/, '_metrics.json'), 'utf8'));
      expect(metrics.mean.reward).toBeCloseTo(lines(out).reduce((a, r) => a + r.reward, 0) / 32, 6);
    } finally {
      await agent.stub.close();
      await verifier.close();
    }
  });

  it('a member that never finishes: score_rest scores the group after the deadline; fail_group records the whole group as failed', async () => {
    for (const policy of ['score_rest', 'fail_group'] as const) {
      const agent = await stubAgent();
      const verifier = await stubGroupVerifier();
      agent.hold.add('1:5');
      try {
        const out = join(tmp(), 'out.jsonl');
        const t0 = Date.now();
        const s = await collectRollouts({ client: clientFor(agent.stub, verifier, { group_wait_timeout_s: 1, group_member_failure: policy }), inputPath: inputFile(2), outputPath: out, agentName: 'judge_agent', numRepeats: 8, concurrency: 16 });
        expect(Date.now() - t0).toBeLessThan(10_000);
        const rows = lines(out);
        const failures = lines(out.replace(/\.jsonl$/, '_failures.jsonl'));
        expect(rows.filter((r) => r._ng_task_index === 0)).toHaveLength(8);
        if (policy === 'score_rest') {
          expect(rows.filter((r) => r._ng_task_index === 1)).toHaveLength(7);
          expect(failures.map((f) => `${f._ng_task_index}:${f._ng_rollout_index}`)).toEqual(['1:5']);
          expect(groupsScored(verifier).sort()).toEqual([0, 1]);
          expect(verifier.requestsTo('/verify_group').find((r) => r.body.task_index === 1)!.body.members).toHaveLength(7);
        } else {
          expect(rows.filter((r) => r._ng_task_index === 1)).toHaveLength(0);
          expect(failures).toHaveLength(8);
          expect(groupsScored(verifier)).toEqual([0]);
        }
        for (const f of failures) expect(f.reason_class).toBe('group_failed');
        expect(s.failed).toBe(failures.length);
      } finally {
        agent.release();
        await agent.stub.close();
        await verifier.close();
      }
    }
  });

  it('a failed group verify is a recorded failure of each member, never a reward', async () => {
    const agent = await stubAgent();
    const verifier = await startStubServer({ '/verify_group': () => ({ json: { members: [{ member_id: '0-0', reward: 1 }] } }) });
    try {
      const out = join(tmp(), 'out.jsonl');
      const s = await collectRollouts({ client: clientFor(agent.stub, verifier), inputPath: inputFile(1), outputPath: out, agentName: 'judge_agent', numRepeats: 4, concurrency: 4 });
      expect(lines(out)).toHaveLength(0);
      expect(s.failed).toBe(4);
      expect(lines(out.replace(/\.jsonl$/, '_failures.jsonl')).map((f) => f.reason_class)).toEqual(['group_failed', 'group_failed', 'group_failed', 'group_failed']);
    } finally {
      await agent.stub.close();
      await verifier.close();
    }
  });

  it('a collector stopped mid-group keeps no part of that group; the rerun scores every group exactly once', async () => {
    const agent = await stubAgent();
    const verifier = await stubGroupVerifier();
    agent.hold.add('2:3');
    try {
      const input = inputFile(3);
      const out = join(tmp(), 'out.jsonl');
      const stop = new AbortController();
      const first = collectRollouts({ client: clientFor(agent.stub, verifier), inputPath: input, outputPath: out, agentName: 'judge_agent', numRepeats: 8, concurrency: 24, signal: stop.signal });
      // Groups 0 and 1 are scored; group 2 holds 7 finished members and waits for the 8th.
      while (groupsScored(verifier).length < 2 || agent.stub.requestsTo('/run').length < 24) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      stop.abort();
      const s1 = await first;
      expect(s1.interrupted).toBe(true);
      expect(new Set(lines(out).map((r) => r._ng_task_index))).toEqual(new Set([0, 1]));
      agent.release();
      const s2 = await collectRollouts({ client: clientFor(agent.stub, verifier), inputPath: input, outputPath: out, agentName: 'judge_agent', numRepeats: 8, concurrency: 24 });
      expect(s2.skipped).toBe(16);
      expectScored(lines(out), 3, 8);
      expect(groupsScored(verifier).sort()).toEqual([0, 1, 2]);
      // A third run finds every group scored and sends nothing.
      const runs = agent.stub.requestsTo('/run').length;
      const s3 = await collectRollouts({ client: clientFor(agent.stub, verifier), inputPath: input, outputPath: out, agentName: 'judge_agent', numRepeats: 8, concurrency: 24 });
      expect(s3.written).toBe(0);
      expect(agent.stub.requestsTo('/run').length).toBe(runs);
      expect(groupsScored(verifier)).toHaveLength(3);
    } finally {
      agent.release();
      await agent.stub.close();
      await verifier.close();
    }
  });
});

const redisBin = findRedisServer();
if (redisBin.path === null) console.log(`skipping the group verify queue tests: ${redisBin.reason}`);

describe.skipIf(redisBin.path === null)('group verify through the Redis queue', () => {
  let redis: LocalRedis;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('scores each group once; a member later than the deadline is recorded; a stopped collector leaves its held groups to the rerun', async () => {
    const agent = await stubAgent();
    const verifier = await stubGroupVerifier();
    agent.hold.add('0:6');
    const stopWorker = new AbortController();
    try {
      const input = inputFile(3);
      const out = join(tmp(), 'out.jsonl');
      const client = clientFor(agent.stub, verifier);
      const worker = runWorker({ client, queueUrl: redis.url, queue: 'groups', concurrency: 24, leaseMs: 60_000, signal: stopWorker.signal });
      const stop = new AbortController();
      const first = collectViaQueue({ queueUrl: redis.url, queue: 'groups', inputPath: input, outputPath: out, agentName: 'judge_agent', numRepeats: 8, client, signal: stop.signal });
      while (groupsScored(verifier).length < 2) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
      stop.abort();
      const s1 = await first;
      expect(s1.interrupted).toBe(true);
      expect(new Set(lines(out).map((r) => r._ng_task_index))).toEqual(new Set([1, 2]));
      // The rerun reads the held members of group 0 again (its read position stayed before them).
      agent.release();
      const s2 = await collectViaQueue({ queueUrl: redis.url, queue: 'groups', inputPath: input, outputPath: out, agentName: 'judge_agent', numRepeats: 8, client });
      expect(s2.failed).toBe(0);
      expectScored(lines(out), 3, 8);
      expect(groupsScored(verifier).sort()).toEqual([0, 1, 2]);
      stopWorker.abort();
      await worker;

      // A member that finishes after its group's deadline: the group is scored without it, the member recorded.
      const late = await stubAgent();
      late.hold.add('0:2');
      const out2 = join(tmp(), 'late.jsonl');
      const lateClient = clientFor(late.stub, verifier, { group_wait_timeout_s: 1 });
      const stopLate = new AbortController();
      const worker2 = runWorker({ client: lateClient, queueUrl: redis.url, queue: 'late', concurrency: 8, leaseMs: 60_000, signal: stopLate.signal });
      const collecting = collectViaQueue({ queueUrl: redis.url, queue: 'late', inputPath: inputFile(1), outputPath: out2, agentName: 'judge_agent', numRepeats: 4, client: lateClient });
      while (!verifier.requestsTo('/verify_group').some((r) => r.body.members.length === 3)) await new Promise((r) => setTimeout(r, 20));
      late.release();
      const s3 = await collecting;
      expect(lines(out2)).toHaveLength(3);
      expect(s3.failed).toBe(1);
      expect(lines(out2.replace(/\.jsonl$/, '_failures.jsonl'))[0]).toMatchObject({ _ng_rollout_index: 2, reason_class: 'group_failed' });
      stopLate.abort();
      await worker2;
      await late.stub.close();
    } finally {
      stopWorker.abort();
      agent.release();
      await agent.stub.close();
      await verifier.close();
    }
  });
});
