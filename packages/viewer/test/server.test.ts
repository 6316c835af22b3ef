import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, type ViewerHandle } from '../src/index.js';
import { rollout, writeSmallFile } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-'));
const file = join(dir, 'rollouts.jsonl');
let viewer: ViewerHandle;

beforeAll(async () => {
  writeSmallFile(file);
  viewer = await startViewer({ jsonlPath: file, port: 0 });
});
afterAll(async () => {
  await viewer?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await fetch(new URL(path, viewer.url));
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: Object.fromEntries(res.headers) };
}

describe('viewer API', () => {
  it('binds 127.0.0.1 and serves the page with a strict content security policy', async () => {
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script src="/app.js"');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('serves the page script as one bundled browser script (no module syntax left to load)', async () => {
    const script = await get('/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(typeof script.body).toBe('string');
    expect(script.body).toMatch(/^"use strict";\n\(\(\) => \{/);
    expect(script.body).not.toMatch(/^\s*(import|export)\s/m);
    expect(script.body).toContain("document.addEventListener(\"DOMContentLoaded\"");
  });

  it('summarises rows, invalid rows and the reward distribution', async () => {
    const { body } = await get('/api/summary');
    expect(body.rows).toBe(12);
    expect(body.invalidRows).toBe(1);
    expect(body.rewards.count).toBe(11);
    expect(body.histogram.map((b: { label: string; count: number }) => [b.label, b.count])).toEqual([
      ['0', 3],
      ['0.5', 4],
      ['1', 4],
    ]);
  });

  it('aggregate metrics: create-params metrics plus reward, accuracy (booleans as 0/1), string counts; no response', async () => {
    const { body } = await get('/api/summary');
    const m = JSON.parse(body.metricsText);
    expect(m['Number of examples']).toBe(11);
    expect(m['Number of tools']['Average']).toBe(1);
    expect(m['Temperature']['Median']).toBe(0.7);
    expect(m.reward['Total # non-null values']).toBe(11);
    expect(m.accuracy['Average']).toBe(0.364); // 4 of 11, rounded to 3 decimals below 1
    expect(m.category).toEqual({ unique_count: 3, total_count: 11 });
    expect(m.response).toBeUndefined();
    expect(m.responses_create_params).toBeUndefined();
    expect(body.metricsText).toContain('"Average": 1.0,'); // Python float formatting
  });

  it('filters by reward range and pages', async () => {
    const ones = await get('/api/rows?min_reward=1');
    expect(ones.body.total).toBe(4);
    expect(ones.body.rows.every((r: { reward: number }) => r.reward === 1)).toBe(true);
    const mid = await get('/api/rows?min_reward=0.1&max_reward=0.9');
    expect(mid.body.rows.map((r: { index: number }) => r.index)).toEqual([2, 5, 8, 11]);
    const page = await get('/api/rows?start=10&limit=5');
    expect(page.body.total).toBe(12);
    expect(page.body.rows.map((r: { index: number }) => r.index)).toEqual([10, 11]);
    expect(page.body.rows[0].responseId).toBe('resp_000010');
    expect(page.body.rows[0].toolCalls).toBe(1);
    expect(page.body.rows[0].scores).toEqual({ accuracy: false, set_overlap: 0 });
  });

  it('searches the text, including characters escaped in the file', async () => {
    const city = await get('/api/rows?q=' + encodeURIComponent('CITY 10'));
    expect(city.body.rows.map((r: { index: number }) => r.index)).toEqual([10]);
    const accented = await get('/api/rows?q=' + encodeURIComponent('héllo'));
    expect(accented.body.rows.map((r: { index: number }) => r.index)).toEqual([4]);
    const combined = await get('/api/rows?q=city&max_reward=0');
    expect(combined.body.rows.map((r: { index: number }) => r.index)).toEqual([1, 4, 10]);
  });

  it('serves one row read from disk, and the invalid line as raw text with its error', async () => {
    const row = await get('/api/rows/3');
    expect(row.body.row.response.id).toBe('resp_000003');
    expect(row.body.row.reward).toBe(1);
    expect(row.body.warning).toBeNull();
    // A create-params key outside the strict schema is noted; the row is still shown and counted.
    const noted = await get('/api/rows/9');
    expect(noted.body.warning).toMatch(/responses_create_params: unknown key\(s\) "seed"/);
    expect(noted.body.error).toBeNull();
    const bad = await get('/api/rows/7');
    expect(bad.body.row).toBeNull();
    expect(bad.body.raw).toBe('{"this is": not json');
    expect(bad.body.error).toMatch(/not valid JSON/);
    const last = await get('/api/rows/11');
    expect(last.body.row.response.id).toBe('resp_000011');
  });

  it('answers bad input with a clear error, not a 500', async () => {
    expect((await get('/api/rows/99')).status).toBe(404);
    expect((await get('/api/rows/99')).body.detail).toMatch(/rows 0 to 11/);
    expect((await get('/api/rows/abc')).status).toBe(400);
    const r = await get('/api/rows?min_reward=lots');
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/min_reward/);
    expect((await get('/api/rows?limit=100000')).status).toBe(400);
    expect((await get('/nope')).status).toBe(404);
  });

  it('refuses requests for another Host name', async () => {
    const u = new URL(viewer.url);
    const status = await new Promise<number>((ok, fail) => {
      const req = request({ host: u.hostname, port: u.port, path: '/api/summary', headers: { host: 'evil.example:80' } }, (res) => {
        res.resume();
        ok(res.statusCode ?? 0);
      });
      req.on('error', fail);
      req.end();
    });
    expect(status).toBe(421);
  });
});

describe('viewer on larger files and edge cases', () => {
  it('indexes a file without a final newline and with CRLF endings, reading rows back by offset', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ng-viewer-crlf-'));
    try {
      const p = join(d, 'x.jsonl');
      const rows = Array.from({ length: 3000 }, (_, i) => JSON.stringify(rollout(i, { reward: i % 7 === 0 ? 1 : i / 3000 })));
      writeFileSync(p, rows.join('\r\n'));
      const v = await startViewer({ jsonlPath: p, port: 0 });
      try {
        expect(v.index.size).toBe(3000);
        for (const i of [0, 1500, 2999]) {
          const res = await fetch(new URL(`/api/rows/${i}`, v.url));
          const body = (await res.json()) as { row: { response: { id: string } } };
          expect(body.row.response.id).toBe(`resp_${String(i).padStart(6, '0')}`);
        }
        const summary = (await (await fetch(new URL('/api/summary', v.url))).json()) as { histogram: unknown[] };
        expect(summary.histogram).toHaveLength(20); // many distinct rewards -> binned
      } finally {
        await v.close();
      }
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('reports a missing file clearly', async () => {
    await expect(startViewer({ jsonlPath: join(dir, 'missing.jsonl'), port: 0 })).rejects.toThrow(/does not exist.*\+jsonl_fpath/);
  });

  it('computes upstream-style metrics over recorded multineedle rollouts', async () => {
    const p = resolve(__dirname, '../../../../shared/upstream-data/multineedle/example_rollouts.jsonl');
    if (!existsSync(p)) {
      console.log('skipping: upstream multineedle rollouts not found');
      return;
    }
    const v = await startViewer({ jsonlPath: p, port: 0 });
    try {
      const m = JSON.parse(v.index.metricsText);
      expect(v.index.size).toBe(5);
      expect(v.index.rows.every((r) => r.error === null)).toBe(true);
      expect(m['Number of examples']).toBe(5);
      for (const k of ['reward', 'accuracy', 'set_overlap']) expect(m[k]['Total # non-null values']).toBe(5);
      expect(m.response).toBeUndefined();
      const rewards = v.index.rows.map((r) => r.reward);
      expect(m.reward.Average).toBeCloseTo(rewards.reduce((a, b) => a! + b!, 0)! / 5, 2);
    } finally {
      await v.close();
    }
  });
});
