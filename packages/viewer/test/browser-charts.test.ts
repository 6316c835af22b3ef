/**
 * The charts, the breakdown, the token view and three runs side by side, in real headless
 * Chromium. Each chart's canvas must be painted and carry the numbers the fixture runs imply;
 * screenshots are kept in packages/viewer/test-artifacts/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tokenSequence } from '@nemo-gym/bridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, openViewer, waitText, type Browser, type Page } from './chromium.js';
import { ARTIFACTS, chartFacts, PLAN_A, PLAN_B, PLAN_C, TOKENS, writeChartFile, type TaskPlan } from './fixtures.js';

/** The part of a canvas the page-side checks read (the tests are not compiled against the DOM). */
interface Canvas {
  width: number;
  height: number;
  clientWidth: number;
  clientHeight: number;
  getAttribute(name: string): string | null;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}

const RUNS: [string, string, Record<number, TaskPlan>][] = [
  ['a', 'run_a.jsonl', PLAN_A],
  ['b', 'run_b.jsonl', PLAN_B],
  ['c', 'run_c.jsonl', PLAN_C],
];

/** What each chart must show for a plan, computed from the plan (not from the viewer's code). */
function expected(plan: Record<number, TaskPlan>) {
  const tasks = Object.entries(plan).map(([t, p]) => ({ t: Number(t), ...p }));
  const rewards = tasks.flatMap((p) => p.rewards);
  const perTask = (f: (t: number) => number) => {
    const m = new Map<number, number>();
    for (const p of tasks) m.set(f(p.t), (m.get(f(p.t)) ?? 0) + p.rewards.length);
    const keys = [...m.keys()].sort((x, y) => x - y);
    return { labels: keys.map(String), values: keys.map((k) => m.get(k)!) };
  };
  const passBins = [0, 0, 0, 0, 0, 0];
  for (const p of tasks) {
    const rate = p.rewards.filter((r) => r === 1).length / p.rewards.length;
    passBins[rate === 0 ? 0 : rate === 1 ? 5 : rate <= 0.25 ? 1 : rate <= 0.5 ? 2 : rate <= 0.75 ? 3 : 4]!++;
  }
  const errors = tasks.reduce((a, p) => a + p.rewards.filter((r) => chartFacts(p.t).toolError(r)).length, 0);
  const rewardLabels = [...new Set(rewards)].sort((x, y) => x - y);
  return {
    rows: rewards.length,
    mean: rewards.reduce((a, b) => a + b, 0) / rewards.length,
    reward: { labels: rewardLabels.map(String), values: rewardLabels.map((v) => rewards.filter((r) => r === v).length) },
    passrate: { labels: ['0', '0–0.25', '0.25–0.5', '0.5–0.75', '0.75–1', '1'], values: passBins },
    tokens: perTask((t) => chartFacts(t).outputTokens),
    latency: perTask((t) => chartFacts(t).latencyS),
    tools: { labels: ['get_weather'], errors, calls: rewards.length },
    signal: passBins.slice(1, 5).reduce((a, b) => a + b, 0),
  };
}

describe.skipIf(!haveChromium)('viewer charts in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-charts-'));
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const [, file, plan] of RUNS) writeChartFile(join(dir, file), plan);
    browser = await openViewer(dir, { jsonlPath: join(dir, 'run_a.jsonl'), compareJsonlPaths: [join(dir, 'run_b.jsonl'), join(dir, 'run_c.jsonl')] });
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });


  /** A chart's labels and values as its canvas carries them, and how many of its pixels are painted. */
  const chart = (id: string) =>
    page.$eval(`#${id}`, (c) => {
      const canvas = c as unknown as Canvas;
      const ctx = canvas.getContext('2d')!;
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) painted++;
      return {
        labels: JSON.parse(canvas.getAttribute('data-labels') ?? '[]') as string[],
        values: JSON.parse(canvas.getAttribute('data-values') ?? '[]') as number[],
        series: JSON.parse(canvas.getAttribute('data-series') ?? '[]') as { label: string; data: number[] }[],
        width: canvas.clientWidth,
        height: canvas.clientHeight,
        painted,
      };
    });

  it('draws every chart once per run, painted, with the numbers of each fixture run', async () => {
    await page.click('#tab-charts');
    await page.waitForSelector('#charts[data-ready="1"]');
    await page.waitForSelector('#chart-breakdown-c');
    for (const [name, , plan] of RUNS) {
      const want = expected(plan);
      for (const kind of ['reward', 'passrate', 'tokens', 'length', 'latency', 'tools', 'breakdown']) {
        const c = await chart(`chart-${kind}-${name}`);
        expect(c.width, `${kind} ${name}`).toBeGreaterThan(100);
        expect(c.height, `${kind} ${name}`).toBeGreaterThan(100);
        expect(c.painted, `${kind} ${name} is painted`).toBeGreaterThan(500);
      }
      const reward = await chart(`chart-reward-${name}`);
      expect({ labels: reward.labels, values: reward.values }).toEqual(want.reward);
      const pass = await chart(`chart-passrate-${name}`);
      expect({ labels: pass.labels, values: pass.values }).toEqual(want.passrate);
      const tokens = await chart(`chart-tokens-${name}`);
      expect({ labels: tokens.labels, values: tokens.values }).toEqual(want.tokens);
      const latency = await chart(`chart-latency-${name}`);
      expect({ labels: latency.labels, values: latency.values }).toEqual(want.latency);
      const tools = await chart(`chart-tools-${name}`);
      expect(tools.labels).toEqual(want.tools.labels);
      expect(tools.series).toEqual([
        { label: 'errors', data: [want.tools.errors] },
        { label: 'ok', data: [want.tools.calls - want.tools.errors] },
      ]);
      const caption = await page.textContent(`.chart-row[data-kind="passrate"] .chart-card[data-run="${name}"] .chart-caption`);
      expect(caption).toContain(`with signal ${want.signal} `);
    }
    // The reward bars are coloured by value: red for 0, green for 1.
    const colours = await page.$eval('#chart-reward-a', (c) => {
      const canvas = c as unknown as Canvas;
      const ctx = canvas.getContext('2d')!;
      const img = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let red = 0;
      let green = 0;
      for (let i = 0; i < img.length; i += 4) {
        if (img[i]! > 180 && img[i + 1]! < 80 && img[i + 2]! < 80) red++;
        if (img[i]! < 100 && img[i + 1]! > 130 && img[i + 2]! < 60) green++;
      }
      return { red, green };
    });
    expect(colours.red).toBeGreaterThan(200);
    expect(colours.green).toBeGreaterThan(200);
    await page.screenshot({ path: join(ARTIFACTS, 'charts-three-runs.png'), fullPage: true });
  });

  it('lists every summary for each run in one table', async () => {
    const table: Record<string, (string | null)[]> = await page.$$eval('#runs-table tbody tr', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.getAttribute('data-figure'), [...tr.querySelectorAll('td[data-run]')].map((td) => td.textContent)])),
    );
    expect(await page.$$eval('#runs-table thead th', (ths) => ths.map((th) => th.textContent))).toEqual(['Figure', 'A: run_a.jsonl', 'B: run_b.jsonl', 'C: run_c.jsonl']);
    const wants = RUNS.map(([, , plan]) => expected(plan));
    expect(table.Rows).toEqual(wants.map((w) => String(w.rows)));
    expect(table['Mean reward']!.map((x) => Number(x).toFixed(3))).toEqual(wants.map((w) => w.mean.toFixed(3)));
    expect(table['Tool calls / errors']).toEqual(wants.map((w) => `${w.tools.calls} / ${w.tools.errors}`));
    expect(table['Latency p50 / p90 (s)']![0]).toMatch(/^\d/);
    // Each run's aggregate metrics, in the format of the metrics files.
    const metrics = await page.$$eval('.run-details pre', (pres) => pres.map((p) => JSON.parse(p.textContent ?? '{}') as Record<string, unknown>));
    expect(metrics).toHaveLength(3);
    expect(metrics.map((m) => (m.reward as { Average: number }).Average.toFixed(2))).toEqual(wants.map((w) => w.mean.toFixed(2)));
  });

  it('breaks the runs down by agent and by any verifier field', async () => {
    const byAgent = await chart('chart-breakdown-a');
    // PLAN_A: simple_agent tasks 0, 2, 4 (12 rows, 6 passed), other_agent 1, 3, 5 (11 rows, 3 passed).
    expect(byAgent.labels).toEqual(['simple_agent', 'other_agent']);
    expect(byAgent.series[1]).toEqual({ label: 'pass rate', data: [0.5, 3 / 11] });
    await page.selectOption('#group-by', 'category');
    await page.waitForFunction(() => {
      const c = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#chart-breakdown-a');
      return c?.getAttribute('data-labels') === '["even","odd"]';
    });
    const rows = await page.$$eval('.chart-card[data-run="a"] table.breakdown tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    // even = tasks 0, 2, 4 (the same rows as simple_agent); odd = 1, 3, 5 with task 1's 4 tool errors.
    expect(rows).toEqual([
      ['even', '12', '0.5', '0.5', '40', '0 / 12', '3'],
      ['odd', '11', '0.2727', '0.2727', '48.18', '4 / 11', '4'],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, 'charts-breakdown.png'), fullPage: true });
  });

  it('highlights tool errors', async () => {
    const cap = await page.$eval('.chart-row[data-kind="tools"] .chart-card[data-run="a"] .chart-caption', (p) => ({ text: p.textContent, cls: p.className }));
    expect(cap.text).toBe('23 calls · 4 errors (17.39%) · 4 of 23 rollouts with calls hit a tool error');
    expect(cap.cls).toContain('error');
    // The list filters the rollouts that hit one, marks their calls, and the conversation shows the failed output in red.
    await page.click('#tab-rows');
    await page.selectOption('#tool-errors', 'with');
    await waitText(page, '#list-status', '4 matching rows');
    const calls = await page.$$eval('#rows-body tr td:nth-child(6)', (tds) => tds.map((td) => [td.textContent, td.className]));
    expect(calls).toEqual(Array.from({ length: 4 }, () => ['1 (1 err)', 'error']));
    await page.click('#rows-body tr[data-index="4"]');
    await page.waitForSelector('#conversation .bubble.toolerr');
    expect(await page.textContent('#conversation .bubble.toolerr h3')).toBe('Turn 1 Step 1 - Function call output - tool error (tool call ID `call_1_0`)');
    expect(await page.$$eval('#conversation .bubble.toolout', (b) => b.length)).toBe(1);
    await page.selectOption('#tool-errors', '');
    await waitText(page, '#list-status', '23 matching rows');
  });

  it('shows one rollout\'s tokens as ng-export +format=rl writes them, no ids overlapping', async () => {
    await page.click('#tab-rows');
    await page.waitForSelector('#rows-body tr[data-index="0"]');
    await page.click('#rows-body tr[data-index="0"]');
    await page.waitForSelector('#tokens summary');
    await page.click('#tokens summary');
    await page.waitForSelector('#tokens[data-loaded="1"] .tok[data-pos]');
    const chips = await page.$$eval('#tokens .tokens .tok', (spans) =>
      spans.map((s) => {
        const r = s.getBoundingClientRect();
        return { id: Number(s.querySelector('b')!.textContent), mask: s.classList.contains('m1') ? 1 : 0, title: s.getAttribute('title'), box: [r.left, r.top, r.right, r.bottom] };
      }),
    );
    const row = JSON.parse(readFileSync(join(dir, 'run_a.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown>;
    const exported = tokenSequence(row);
    expect(exported.input_ids).toEqual(TOKENS.input_ids);
    expect(chips.map((c) => c.id)).toEqual(exported.input_ids);
    expect(chips.map((c) => c.mask)).toEqual(exported.loss_mask);
    expect(chips.map((c) => Number(/log-prob (-?[\d.]+)/.exec(c.title!)![1]))).toEqual(exported.logprobs);
    expect(await page.textContent('#tokens .token-summary')).toBe('11 tokens · prompt_length 4 · 5 with loss mask 1 · 2 turns · mean log-prob of generated tokens -0.27');
    for (let i = 0; i < chips.length; i++) {
      for (let j = i + 1; j < chips.length; j++) {
        const [a, b] = [chips[i]!.box, chips[j]!.box];
        const overlap = a[0]! < b[2]! - 0.5 && b[0]! < a[2]! - 0.5 && a[1]! < b[3]! - 0.5 && b[1]! < a[3]! - 0.5;
        expect(overlap, `tokens ${i} and ${j} overlap`).toBe(false);
      }
    }
    await page.screenshot({ path: join(ARTIFACTS, 'tokens.png') });
  });

  it('clips no column of the rollout list or the runs table', async () => {
    const clipped = await page.$$eval('#rows th, #rows td:not(:last-child)', (cells) =>
      cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent),
    );
    expect(clipped).toEqual([]);
    // The prompt column keeps room for its preview (the list scrolls sideways rather than squeeze it).
    expect(await page.$eval('#rows th:last-child', (th) => th.getBoundingClientRect().width)).toBeGreaterThan(150);
    expect(await page.$eval('#rows th:last-child', (th) => th.getBoundingClientRect().height)).toBeLessThan(40);
  });

  it('compares A with the third run', async () => {
    await page.click('#tab-compare');
    await page.waitForSelector('#compare-b');
    expect(await page.$$eval('#compare-b option', (os) => os.map((o) => o.textContent))).toEqual(['B: run_b.jsonl', 'C: run_c.jsonl']);
    await page.selectOption('#compare-b', 'c');
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector('#compare-summary')?.textContent?.includes('run_c.jsonl') === true);
    const cells = await page.$$eval('#compare-summary dt', (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
    // A has tasks 0–5, C has 0–3: 4 matched, 2 only in A. Deltas C − A: t0 −0.25, t1 +0.5, t2 +0.5, t3 −0.25.
    expect(cells).toMatchObject({ B: 'run_c.jsonl', 'Tasks A / B': '6 / 4', Matched: '4', 'Only A / only B': '2 / 0', Improved: '2', Regressed: '2' });
    await page.click('#rows-body tr.cmp[data-task="#1"]');
    await page.waitForSelector('#side-b .picks button');
    expect(await page.textContent('#side-b h3')).toBe('B: run_c.jsonl');
    await page.screenshot({ path: join(ARTIFACTS, 'compare-a-c.png') });
    expect(browser.errors, browser.errors.join('\n')).toEqual([]);
  });
});
