import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type CaptureEntry } from '@nemo-gym/core/capture';
import { CaptureStore, RolloutCaptureSettingsSchema } from '../../src/capture/store.js';
import { parseRolloutPath, rolloutIdFromRunBody, rolloutPath } from '../../src/capture/rollout-id.js';
import { RolloutIdError } from '../../src/errors.js';
import { defineModelServer, ModelServerConfigSchema, SseReply } from '@nemo-gym/core/server';

describe('rollout ids (as upstream derives them)', () => {
  it('explicit _ng_rollout_id wins; else <task>-<repeat>; -a<n> for a re-dispatch', () => {
    expect(rolloutIdFromRunBody({ _ng_task_index: 17, _ng_rollout_index: 3 })).toBe('17-3');
    expect(rolloutIdFromRunBody({ _ng_task_index: 17, _ng_rollout_index: 3, _ng_attempt_index: 0 })).toBe('17-3');
    expect(rolloutIdFromRunBody({ _ng_task_index: 17, _ng_rollout_index: 3, _ng_attempt_index: 2 })).toBe('17-3-a2');
    expect(rolloutIdFromRunBody({ _ng_rollout_id: 'job7.task_1', _ng_task_index: 17, _ng_rollout_index: 3, _ng_attempt_index: 1 })).toBe('job7.task_1-a1');
    expect(rolloutIdFromRunBody({ _ng_task_index: 17 })).toBeNull();
    expect(rolloutIdFromRunBody({ responses_create_params: {} })).toBeNull();
    expect(rolloutIdFromRunBody(null)).toBeNull();
  });

  it('malformed ids are refused, never rewritten', () => {
    for (const bad of ['', '.hidden', '-x', 'a/b', 'a b', 'ü', 7, 'x'.repeat(201)]) {
      expect(() => rolloutIdFromRunBody({ _ng_rollout_id: bad }), String(bad)).toThrow(RolloutIdError);
    }
    expect(() => rolloutIdFromRunBody({ _ng_task_index: -1, _ng_rollout_index: 0 })).toThrow(/non-negative integers/);
    expect(() => rolloutIdFromRunBody({ _ng_task_index: 1, _ng_rollout_index: 0, _ng_attempt_index: 'x' })).toThrow(/_ng_attempt_index/);
    expect(() => rolloutPath('../x')).toThrow(RolloutIdError);
    expect(rolloutPath('3-1')).toBe('/ng-rollout/3-1');
  });

  it('parses the prefix off a URL', () => {
    expect(parseRolloutPath('/v1/responses')).toBeNull();
    expect(parseRolloutPath('/ng-rollout/3-1/v1/models?x=1')).toEqual({ rolloutId: '3-1', rest: '/v1/models?x=1' });
    expect(parseRolloutPath('/ng-rollout/3-1')).toHaveProperty('problem');
    expect(parseRolloutPath('/ng-rollout/3-1?x')).toHaveProperty('problem');
    expect(parseRolloutPath('/ng-rollout/..%2F/v1/responses')).toHaveProperty('problem');
  });
});

/** A model server whose handlers answer with the rollout id they see; "tokens" in the body makes it record ids. */
const server = defineModelServer({
  className: 'EchoModel',
  configSchema: ModelServerConfigSchema,
  responses: {
    body: z.object({ input: z.unknown(), tokens: z.boolean().optional(), stream: z.boolean().optional() }).loose(),
    handler: (body, ctx) => {
      if (body.tokens) ctx.capture?.record({ prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5], finish_reason: 'stop', output_items: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }], generation_token_ids: [3] }] });
      const answer = { rollout_id: ctx.rolloutId ?? null, capturing: ctx.capture != null };
      if (body.stream) return new SseReply([{ data: JSON.stringify(answer) }, { data: '[DONE]' }]);
      return answer;
    },
  },
  chatCompletions: { body: z.object({}).loose(), handler: (_b, ctx) => ({ rollout_id: ctx.rolloutId ?? null }) },
  models: () => ({ object: 'list', data: [{ id: 'echo' }] }),
  // A route added by a server itself (as /v1/messages may be): it is served under the prefix too.
  routes: (app) => {
    app.post('/v1/custom', async (request) => ({ url: request.url, rollout: (request.raw as unknown as { url: string }).url }));
  },
});

let base = '';
let close: () => Promise<void>;
beforeAll(async () => {
  const app = await server.build({ config: { name: 'echo', rollout_capture: { max_calls_per_rollout: 3, keep_requests: true } } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  close = () => app.close();
});
afterAll(() => close?.());

const post = (path: string, body: unknown) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('per-rollout routes on a model server', () => {
  it('every route is served under /ng-rollout/<id>/ and handlers see the id', async () => {
    expect(await (await post('/ng-rollout/5-0/v1/responses', { input: 'x' })).json()).toEqual({ rollout_id: '5-0', capturing: true });
    expect(await (await post('/ng-rollout/5-0-a1/v1/chat/completions', { messages: [] })).json()).toEqual({ rollout_id: '5-0-a1' });
    expect(await (await post('/v1/responses', { input: 'x' })).json()).toEqual({ rollout_id: null, capturing: false });
    expect(await (await fetch(`${base}/ng-rollout/5-0/v1/models`)).json()).toEqual({ object: 'list', data: [{ id: 'echo' }] });
    expect(await (await post('/ng-rollout/5-0/v1/custom', {})).json()).toEqual({ url: '/v1/custom', rollout: '/v1/custom' });
    const streamed = await (await post('/ng-rollout/5-1/v1/responses', { input: 'x', stream: true })).text();
    expect(streamed).toContain('"rollout_id":"5-1"');
  });

  it('a malformed id answers 400 with the rule, on any method', async () => {
    for (const path of ['/ng-rollout/.x/v1/responses', '/ng-rollout/a%20b/v1/responses', '/ng-rollout/ok', '/ng-rollout//v1/responses']) {
      const r = await post(path, { input: 'x' });
      expect(r.status, path).toBe(400);
      expect(((await r.json()) as { detail: string }).detail, path).toMatch(/rollout id|names a rollout but no route/);
    }
    expect((await fetch(`${base}/ng-rollout/.x/v1/models`)).status).toBe(400);
  });

  it('captures one entry per call, says when the backend gave no ids, and fetches/releases the capture', async () => {
    await post('/ng-rollout/cap-1/v1/responses', { input: 'a', tokens: true });
    await post('/ng-rollout/cap-1/v1/responses', { input: 'b' });
    const got = (await (await fetch(`${base}/ng-rollout/cap-1/capture`)).json()) as { calls: CaptureEntry[]; complete: boolean };
    expect(got.complete).toBe(true);
    expect(got.calls).toHaveLength(2);
    const [withIds, without] = got.calls as [CaptureEntry, CaptureEntry];
    expect(withIds).toMatchObject({ rollout_id: 'cap-1', seq: 0, route: '/v1/responses', has_token_ids: true, prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5], finish_reason: 'stop', request: { input: 'a', tokens: true } });
    // Token fields are held once, on the entry, not again on the items.
    expect(withIds.output_items).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] }]);
    expect(withIds.ended_at).toBeGreaterThanOrEqual(withIds.started_at);
    expect(without).toMatchObject({ has_token_ids: false, missing_ids_reason: expect.stringMatching(/model server `echo` \(EchoModel\) gave no token ids/) });
    const strict = await fetch(`${base}/ng-rollout/cap-1/capture?require_token_ids=true`);
    expect(strict.status).toBe(422);
    expect(((await strict.json()) as { detail: string }).detail).toMatch(/1 of 2 call\(s\) on model server `echo` have no token ids/);
    const traj = (await (await fetch(`${base}/ng-rollout/cap-1/trajectory?release=false`)).json()) as { mask_sample: boolean; failure_reason: string };
    expect(traj.mask_sample).toBe(true);
    expect(traj.failure_reason).toMatch(/have no token ids/);
    expect(await (await fetch(`${base}/ng-rollout/cap-1/capture`, { method: 'DELETE' })).json()).toEqual({ rollout_id: 'cap-1', released: true });
    const gone = await fetch(`${base}/ng-rollout/cap-1/capture`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { detail: string }).detail).toMatch(/holds no capture for rollout cap-1/);
    expect((await fetch(`${base}/capture`)).status).toBe(400);
  });

  it('the trajectory route builds and releases; calls past max_calls_per_rollout mark the rollout incomplete', async () => {
    await post('/ng-rollout/t-1/v1/responses', { input: 'a', tokens: true });
    const traj = (await (await fetch(`${base}/ng-rollout/t-1/trajectory`)).json()) as { mask_sample: boolean; output: { generation_token_ids?: number[] }[] };
    expect(traj.mask_sample).toBe(false);
    expect(traj.output.at(-1)).toMatchObject({ prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] });
    expect((await fetch(`${base}/ng-rollout/t-1/capture`)).status).toBe(404);
    for (let i = 0; i < 4; i++) await post('/ng-rollout/t-2/v1/responses', { input: 'a', tokens: true });
    const c = (await (await fetch(`${base}/ng-rollout/t-2/capture?release=true`)).json()) as { calls: unknown[]; complete: boolean; problems: string[] };
    expect(c.calls).toHaveLength(3);
    expect(c.complete).toBe(false);
    expect(c.problems[0]).toMatch(/more than 3 calls/);
  });

  it('the capture routes: the same bytes for the same capture, clear errors for bad calls', async () => {
    const get = async (url: string, method = 'GET') => {
      const r = await fetch(base + url, { method });
      return { status: r.status, body: await r.text() };
    };
    await post('/ng-rollout/same-1/v1/responses', { input: 'a', tokens: true });
    await post('/ng-rollout/same-1/v1/responses', { input: 'b' });
    for (const url of ['/ng-rollout/same-1/trajectory?release=false&mode=per_call', '/ng-rollout/same-1/trajectory?release=false', '/ng-rollout/same-1/trajectory?release=false&prompt_ids=delta', '/ng-rollout/same-1/capture']) {
      const first = await get(url);
      expect(first.status, url).toBe(200);
      expect(first.body, url).toContain('"generation_token_ids":[3]');
      expect(await get(url), url).toEqual(first);
    }
    const errors: [string, number, RegExp][] = [
      ['/ng-rollout/same-1/capture?release=maybe', 400, /\?release= takes true or false; got \\"maybe\\"/],
      ['/ng-rollout/same-1/trajectory?mode=zigzag', 400, /\?mode= is one of prefix_merging, per_call/],
      ['/ng-rollout/same-1/trajectory?prompt_ids=half', 400, /\?prompt_ids= is full or delta; got \\"half\\"/],
      ['/trajectory', 400, /served per rollout: use \/ng-rollout\/<rollout_id>\/trajectory/],
      ['/ng-rollout/same-1/capture?require_token_ids=true', 422, /1 of 2 call\(s\) on model server `echo` have no token ids/],
      ['/ng-rollout/nobody/capture', 404, /holds no capture for rollout nobody/],
    ];
    for (const [url, status, detail] of errors) {
      const a = await get(url);
      expect(a.status, url).toBe(status);
      expect(a.body, url).toMatch(detail);
    }
    expect(await get('/ng-rollout/same-1/capture', 'DELETE')).toEqual({ status: 200, body: '{"rollout_id":"same-1","released":true}' });
    expect(await get('/ng-rollout/same-1/capture', 'DELETE')).toEqual({ status: 200, body: '{"rollout_id":"same-1","released":false}' });
  });
});

describe('CaptureStore limits', () => {
  const entry = (rollout: string, bytes: number): CaptureEntry => ({
    rollout_id: rollout, call_id: Math.random().toString(16).slice(2), seq: 0, route: '/v1/responses', model: null, stream: false, started_at: 0, ended_at: 0,
    has_token_ids: true, missing_ids_reason: null, prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [0], finish_reason: null, request: null, output_items: null, chat_message: null, bytes,
  });

  it('evicts the least recently written rollout beyond max_bytes, and a later call of it is marked incomplete', () => {
    const store = new CaptureStore(RolloutCaptureSettingsSchema.parse({ max_bytes: 1000 }), 'p');
    store.record(entry('a', 400));
    store.record(entry('b', 400));
    store.record(entry('a', 100));
    store.record(entry('c', 400));
    expect(store.stats()).toMatchObject({ rollouts: 2, bytes: 900, evictions: 1 });
    expect(() => store.get('b')).toThrow(/evicted to keep captures within rollout_capture.max_bytes \(1000 bytes\)/);
    store.record(entry('b', 10));
    const b = store.get('b');
    expect(b.complete).toBe(false);
    expect(b.problems[0]).toMatch(/earlier calls of this rollout were dropped/);
  });

  it('expires captures ttl_s after their last call; max_rollouts bounds the count', () => {
    let now = 0;
    const store = new CaptureStore(RolloutCaptureSettingsSchema.parse({ ttl_s: 10, max_rollouts: 2 }), 'p', () => now);
    store.record(entry('a', 1));
    now = 5_000;
    store.record(entry('b', 1));
    now = 11_000;
    expect(() => store.get('a')).toThrow(/expired 10 s after its last call/);
    expect(store.get('b').calls).toHaveLength(1);
    store.record(entry('c', 1));
    store.record(entry('d', 1));
    expect(store.stats().rollouts).toBe(2);
    expect(() => store.get('b')).toThrow(/max_rollouts \(2\)/);
  });
});
