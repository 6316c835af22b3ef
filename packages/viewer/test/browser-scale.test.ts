/**
 * A 200,000-row file in real headless Chromium: the page paints, filters and draws its charts
 * within generous bounds, because every aggregate is computed on the server. The timings are
 * printed (the benchmark proper is `pnpm bench`); the bounds only catch a page that stops
 * being usable.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, SYNTHETIC_TASKS as TASKS, syntheticReward, writeSyntheticFile, type ViewerHandle } from '../src/index.js';
import { haveChromium, launchChromium, waitText, type Browser, type Page } from './chromium.js';
import { ARTIFACTS } from './fixtures.js';

const SCALE_ROWS = 200_000;

describe.skipIf(!haveChromium)('viewer on a 200,000-row file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-scale-'));
  const file = join(dir, 'big.jsonl');
  let viewer: ViewerHandle;
  let browser: Browser;
  let page: Page;
  let indexMs = 0;
  let fileMb = 0;
  const times: Record<string, number> = {};

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await writeSyntheticFile(file, SCALE_ROWS);
    fileMb = statSync(file).size / 1e6;
    const t0 = performance.now();
    viewer = await startViewer({ jsonlPath: file, port: 0 });
    indexMs = performance.now() - t0;
    browser = await launchChromium(dir);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
    console.log(
      `viewer scale (${SCALE_ROWS} rows, ${fileMb.toFixed(0)} MB): index ${Math.round(indexMs)} ms; ` +
        Object.entries(times)
          .map(([k, v]) => `${k} ${Math.round(v)} ms`)
          .join('; '),
    );
  });

  const timed = async (name: string, f: () => Promise<unknown>) => {
    const t0 = performance.now();
    await f();
    times[name] = performance.now() - t0;
    return times[name]!;
  };

  it('paints the summary, the reward chart and the first page of rows', async () => {
    expect(viewer.index.size).toBe(SCALE_ROWS);
    const ms = await timed('first paint', async () => {
      await page.goto(viewer.url);
      await page.waitForSelector('body[data-ready="1"]');
    });
    expect(await page.textContent('#list-status')).toBe(`${SCALE_ROWS} matching rows`);
    expect(await page.$$eval('#rows-body tr', (trs) => trs.length)).toBe(50);
    expect(ms).toBeLessThan(10_000);
  });

  it('filters by reward and by outcome', async () => {
    const passed = Array.from({ length: SCALE_ROWS }, (_, i) => i).filter((i) => syntheticReward(i) === 1).length;
    const ms = await timed('reward filter', async () => {
      await page.fill('#min-reward', '1');
      await page.click('#apply');
      await waitText(page, '#list-status', `${passed} matching rows`);
    });
    expect(ms).toBeLessThan(5_000);
    await timed('agent filter', async () => {
      await page.fill('#min-reward', '');
      await page.selectOption('#agent', 'agent_b');
      await waitText(page, '#list-status', `${SCALE_ROWS / 2} matching rows`);
    });
    expect(times['agent filter']).toBeLessThan(5_000);
  });

  it('draws every chart and the breakdown from server-side aggregates', async () => {
    // The charts follow the list's filters: back to every agent for the whole-file charts.
    await page.selectOption('#agent', '');
    await waitText(page, '#list-status', `${SCALE_ROWS} matching rows`);
    const ms = await timed('charts', async () => {
      await page.click('#tab-charts');
      await page.waitForSelector('#charts[data-ready="1"]');
      await page.waitForSelector('#chart-breakdown-a');
    });
    expect(ms).toBeLessThan(10_000);
    const tools = await page.$eval('#chart-tools-a', (c) => JSON.parse(c.getAttribute('data-series') ?? '[]') as { label: string; data: number[] }[]);
    expect(tools[0]).toEqual({ label: 'errors', data: [Math.ceil(SCALE_ROWS / 13)] });
    const pass = await page.$eval('#chart-passrate-a', (c) => JSON.parse(c.getAttribute('data-values') ?? '[]') as number[]);
    expect(pass.reduce((a, b) => a + b, 0)).toBe(TASKS);
    await timed('group by field', async () => {
      await page.selectOption('#group-by', 'category');
      await page.waitForFunction(() => {
        const c = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#chart-breakdown-a');
        return (c?.getAttribute('data-labels') ?? '').includes('math');
      });
    });
    expect(times['group by field']).toBeLessThan(5_000);
    await page.screenshot({ path: join(ARTIFACTS, 'charts-200k.png'), fullPage: true });
    expect(browser.errors, browser.errors.join('\n')).toEqual([]);
  });

  /** Waits until the Charts view is drawn for `filter` (its query string). */
  const chartsFor = (filter: string) =>
    page.waitForFunction((f) => {
      const charts = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#charts');
      return charts?.getAttribute('data-ready') === '1' && charts.getAttribute('data-filter') === f;
    }, filter);

  it('recomputes every chart for a filter on the server, and answers a filter seen before from its cache', async () => {
    const passed = Array.from({ length: SCALE_ROWS }, (_, i) => i).filter((i) => syntheticReward(i) === 1).length;
    const ms = await timed('filter -> charts', async () => {
      await page.fill('#min-reward', '1');
      await page.click('#apply');
      await chartsFor('min_reward=1');
      await page.waitForSelector('#chart-breakdown-a');
    });
    expect(ms).toBeLessThan(5_000);
    const reward = await page.$eval('#chart-reward-a', (c) => ({ labels: c.getAttribute('data-labels'), values: c.getAttribute('data-values') }));
    expect(reward).toEqual({ labels: '["1"]', values: JSON.stringify([passed]) });
    expect(await page.textContent('#charts-filter')).toContain(`A ${passed} of ${SCALE_ROWS}`);
    await timed('agent filter -> charts', async () => {
      await page.fill('#min-reward', '');
      await page.selectOption('#agent', 'agent_b');
      await chartsFor('agent=agent_b');
    });
    expect(times['agent filter -> charts']).toBeLessThan(5_000);
    const pass = await page.$eval('#chart-passrate-a', (c) => JSON.parse(c.getAttribute('data-values') ?? '[]') as number[]);
    expect(pass.reduce((a, b) => a + b, 0)).toBe(TASKS / 2);
    await timed('filter again (cached)', async () => {
      await page.fill('#min-reward', '1');
      await page.selectOption('#agent', '');
      await page.click('#apply');
      await chartsFor('min_reward=1');
    });
    expect(times['filter again (cached)']).toBeLessThan(5_000);
    expect(browser.errors, browser.errors.join('\n')).toEqual([]);
  });
});
