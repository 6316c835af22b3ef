/**
 * A compiled twin must be indistinguishable from its schema: the same output (key order included)
 * for every valid input and the same issues for every invalid one. Checked over upstream's recorded
 * rollouts (every request, Response and verify body in them) and over broken copies of them.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiled } from '../src/compiled-schema.js';
import { ChatCompletionCreateParamsSchema, ResponseCreateParamsSchema, ResponseSchema } from '../src/openai/index.js';
import { BaseRunRequestSchema, BaseVerifyRequestSchema } from '../src/server/index.js';

const dataRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'shared', 'upstream-data');

function rows(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (!existsSync(dataRoot)) return out;
  for (const server of readdirSync(dataRoot)) {
    const dir = join(dataRoot, server);
    for (const f of readdirSync(dir)) {
      if (!/rollouts.*\.jsonl$/.test(f)) continue;
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line.trim()) out.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  return out;
}

/** Both parsers' answers, as comparable text. */
function outcome(schema: z.ZodType, value: unknown): string {
  const r = schema.safeParse(value);
  return r.success ? `ok ${JSON.stringify(r.data)}` : `issues ${JSON.stringify(r.error.issues)}`;
}

function expectSame(schema: z.ZodType, value: unknown): boolean {
  const want = outcome(schema, value);
  expect(outcome(compiled(schema), value)).toBe(want);
  return want.startsWith('ok');
}

/** Broken copies of a value: a field of the wrong type, an item without its required keys, an unknown key. */
function broken(value: Record<string, unknown>): unknown[] {
  const copies: unknown[] = [];
  const clone = () => structuredClone(value);
  const input = value.input;
  if (Array.isArray(input) && input.length > 0) {
    const a = clone();
    (a.input as Record<string, unknown>[])[0] = { ...(input[0] as object), role: 42, type: 'message' };
    copies.push(a);
    const b = clone();
    (b.input as unknown[]).push({ type: 'function_call', name: 7 });
    copies.push(b);
    const c = clone();
    (c.input as unknown[]).push({ role: 'tool', content: 'x' });
    copies.push(c);
  }
  const d = clone();
  d.temperature = 'hot';
  copies.push(d);
  const e = clone();
  e.tools = [{ type: 'function', parameters: [] }];
  copies.push(e);
  const f = clone();
  f.not_a_field = 1;
  copies.push(f);
  return copies;
}

const recorded = rows();

describe.skipIf(recorded.length === 0)('compiled twins of the request schemas', () => {
  it('give the same output and issues on every recorded request, Response and verify body', () => {
    let valid = 0;
    for (const row of recorded) {
      const params = row.responses_create_params as Record<string, unknown>;
      if (expectSame(ResponseCreateParamsSchema, params)) valid++;
      if (row.response && expectSame(ResponseSchema, row.response)) valid++;
      expectSame(BaseVerifyRequestSchema, row);
      expectSame(BaseRunRequestSchema.loose(), row);
    }
    // Most of upstream's recordings are valid requests: the fast path was taken, not only the fallback.
    expect(valid).toBeGreaterThan(recorded.length);
  });

  it('give the same issues on broken copies of the recorded requests and Responses', () => {
    let invalid = 0;
    for (const row of recorded.slice(0, 60)) {
      for (const copy of broken(row.responses_create_params as Record<string, unknown>)) if (!expectSame(ResponseCreateParamsSchema, copy)) invalid++;
      if (row.response) {
        const resp = structuredClone(row.response) as Record<string, unknown>;
        resp.output = [{ type: 'reasoning' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text' }] }];
        if (!expectSame(ResponseSchema, resp)) invalid++;
      }
    }
    expect(invalid).toBeGreaterThan(100);
  });

  it('also for chat completions requests and non-objects', () => {
    for (const v of [null, 3, 'x', [], {}, { messages: [] }, { messages: [{ role: 'user', content: 'hi' }], model: 'm' }, { messages: [{ role: 'pilot' }] }]) {
      expectSame(ChatCompletionCreateParamsSchema, v);
      expectSame(ResponseCreateParamsSchema, v);
    }
  });

  it('compiles each schema once', () => {
    expect(compiled(ResponseSchema)).toBe(compiled(ResponseSchema));
    expect(compiled(ResponseSchema)).not.toBe(ResponseSchema);
  });
});
