/**
 * What travels through Redis: a job (its body as it is), many records in one results entry (the
 * output lines as one text, no second JSON encoding), and a metrics digest that counts exactly as
 * the result it was taken from.
 */
import { describe, expect, it } from 'vitest';
import { classifyAnswer, MetricsAccumulator, metricsDigest, taggedLine } from '@nemo-gym/core/rollouts';
import { decodeJob, decodeResults, encodeJob, encodeResults, type QueueJob, type QueueRecord } from '../src/queue.js';

const result = (key: string, extra: Partial<QueueRecord> = {}): QueueRecord => ({ kind: 'result', key, agent: 'a b', metrics: { reward: 1 }, ms: 12.5, ...extra }) as QueueRecord;

describe('results entry encoding', () => {
  it('round-trips results and failures in order, the output lines byte for byte as one text', () => {
    const line = taggedLine('{"reward":1,"note":"tab\\tquote\\" line\\nbreak é 😀 \\u2028"}', { reward: 1 }, 3, 1, 'a b');
    const failure: QueueRecord = {
      kind: 'failure',
      key: '4:0',
      agent: 'a b',
      line: 5,
      reason: 'agent answered HTTP 500:\n boom',
      reason_class: 'http_5xx',
      status: 500,
      delivered: 'yes',
      http_attempts: 1,
      started_at: '2025-01-01T00:00:00.000Z',
    };
    const second = result('5:0', { metrics: { reward: 0, ok: true } });
    const fields = encodeResults('w1', [{ record: result('3:1'), text: line }, { record: failure }, { record: second, text: '{"reward":0}' }]);
    const back = decodeResults(fields)!;
    expect(back.worker).toBe('w1');
    expect(back.records).toEqual([result('3:1'), failure, second]);
    expect(back.lines).toBe(`${line}{"reward":0}\n`);
  });

  it('keeps the code of a failure through Redis, and a record without a class is classified by its status and code', () => {
    const failure: QueueRecord = { kind: 'failure', key: '1:0', agent: 'a', line: 2, reason: 'worded any way', status: 500, code: 'NG_ERR_MODEL_TIMEOUT', delivered: 'yes', http_attempts: 1, started_at: '2025-01-01T00:00:00.000Z' };
    const [back] = decodeResults(encodeResults('w', [{ record: failure }]))!.records;
    expect(back).toEqual(failure);
    const rec = back as Extract<QueueRecord, { kind: 'failure' }>;
    expect(classifyAnswer(rec.status!, rec.code)).toBe('timeout');
    expect(classifyAnswer(502, 'NG_ERR_MODEL_UNREACHABLE')).toBe('model_unreachable');
    expect(classifyAnswer(502, undefined)).toBe('http_5xx');
  });

  it('makes a result text with line breaks between its tokens one line, the same JSON', () => {
    const pretty = '{\n  "reward": 0.5,\n  "response": {"output": []}\n}';
    const back = decodeResults(encodeResults('w', [{ record: result('0:0'), text: pretty }]))!;
    expect(back.lines.endsWith('\n')).toBe(true);
    expect(back.lines.slice(0, -1)).not.toMatch(/\n/);
    expect(JSON.parse(back.lines)).toEqual(JSON.parse(pretty));
  });

  it('refuses an entry whose lines do not match its results, or whose records are unreadable', () => {
    const fields = encodeResults('w', [{ record: result('1:0'), text: '{"reward":1}' }, { record: result('2:0'), text: '{"reward":1}' }]);
    expect(decodeResults(fields)).not.toBeNull();
    expect(decodeResults(fields.map((f, i) => (i === 5 ? '{"reward":1}\n' : f)))).toBeNull();
    expect(decodeResults(fields.map((f, i) => (i === 5 ? '{"reward":1}\n{"reward":1}' : f)))).toBeNull();
    expect(decodeResults(fields.map((f, i) => (i === 3 ? 'not json' : f)))).toBeNull();
    expect(decodeResults(['meta', '[{"kind":"other","key":"1:0"}]', 'lines', ''])).toBeNull();
    expect(decodeResults(['recs', '{"kind":"result"}'])).toBeNull();
  });
});

describe('job encoding', () => {
  it('round-trips a job, its body as it is', () => {
    const job: QueueJob = { key: '12:3', run: 'abc', taskIndex: 12, rolloutIndex: 3, line: 13, agent: 'my agent\n"x"', body: '{"responses_create_params":{"input":"a\\nb é"}}' };
    const text = encodeJob(job);
    expect(text.endsWith(job.body)).toBe(true);
    expect(decodeJob(text)).toEqual(job);
  });

  it('reads a job in the all-JSON form, and nothing from text that is not a job', () => {
    const job: QueueJob = { key: '1:0', run: 'r', taskIndex: 1, rolloutIndex: 0, line: 2, agent: 'a', body: '{}' };
    expect(decodeJob(JSON.stringify(job))).toEqual(job);
    expect(decodeJob('garbage')).toBeNull();
    expect(decodeJob('["x",0,1,"r","a"]\n{}')).toBeNull();
    expect(decodeJob('{"key":"1:0"}')).toBeNull();
  });
});

describe('metricsDigest', () => {
  it('adds up exactly as the results it was taken from (means, pass@k, tokens, per agent)', () => {
    const rows: [Record<string, unknown>, number, string][] = [];
    for (let t = 0; t < 6; t++) {
      for (let r = 0; r < 3; r++) {
        const row: Record<string, unknown> = {
          reward: (t + r) % 3 === 0 ? 1 : t % 2 === 0 ? 0 : 0.25,
          passed: r === 0,
          score: t * 0.1 + r,
          name: `task ${t}`,
          nested: { reward: 7 },
          response: { id: 'x', output: [{ type: 'message', content: [] }], usage: { input_tokens: 10 + t, output_tokens: r } },
          _ng_task_index: t,
        };
        if (t === 2) delete (row as { response?: unknown }).response;
        // A key a model may control, kept as data (never a prototype).
        if (t === 3) Object.defineProperty(row, '__proto__', { value: 5, enumerable: true, configurable: true, writable: true });
        rows.push([JSON.parse(JSON.stringify(row)) as Record<string, unknown>, t, t % 2 ? 'agent_a' : 'agent_b']);
      }
    }
    const full = new MetricsAccumulator(true);
    const digested = new MetricsAccumulator(true);
    for (const [row, t, agent] of rows) {
      full.add(row, t, agent);
      // As it travels: to JSON and back.
      digested.add(JSON.parse(JSON.stringify(metricsDigest(row))) as Record<string, unknown>, t, agent);
    }
    expect(digested.summary()).toEqual(full.summary());
    expect(full.summary().tokens).toBeTruthy();
    const withProto = rows.find(([row]) => Object.hasOwn(row, '__proto__'))![0];
    expect(Object.hasOwn(JSON.parse(JSON.stringify(metricsDigest(withProto))) as object, '__proto__')).toBe(true);
  });

  it('gives the queue collector the same pass@k as the results when masked samples leave tasks uneven', () => {
    const full = new MetricsAccumulator(true);
    const digested = new MetricsAccumulator(true);
    // Task 0: 1, 0, 1; task 1: 0, masked, 1; task 2: masked, masked, 0.
    const rows: [Record<string, unknown>, number][] = [
      [{ reward: 1 }, 0], [{ reward: 0 }, 0], [{ reward: 1 }, 0],
      [{ reward: 0 }, 1], [{ reward: 1, mask_sample: true, failure_reason: 'max_steps' }, 1], [{ reward: 1 }, 1],
      [{ reward: 1, mask_sample: true, failure_reason: 'max_steps' }, 2], [{ reward: 1, mask_sample: true, failure_reason: 'sandbox_died' }, 2], [{ reward: 0 }, 2],
    ];
    for (const [row, t] of rows) {
      full.add(row, t, 'a');
      digested.add(JSON.parse(JSON.stringify(metricsDigest(row))) as Record<string, unknown>, t, 'a');
    }
    const summary = digested.summary();
    expect(summary).toEqual(full.summary());
    // pass@1: (2/3 + 1/2 + 0) / 3; pass@3 over task 0 only; the two others left out.
    expect(summary['pass@1']).toBeCloseTo(7 / 18, 12);
    expect(summary['pass@3']).toBe(1);
    expect(summary['pass@k_tasks_left_out']).toBe(2);
  });

  it('holds no text: only numbers, booleans and usage', () => {
    const d = metricsDigest({ reward: 1, long: 'x'.repeat(10_000), response: { output: ['y'.repeat(10_000)], usage: { prompt_tokens: 1 } } });
    expect(JSON.stringify(d)).toBe('{"reward":1,"response":{"usage":{"prompt_tokens":1}}}');
  });
});
