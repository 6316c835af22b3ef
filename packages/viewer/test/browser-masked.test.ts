/**
 * Masked samples and reward components in headless Chromium: the masked rows are listed with a
 * badge and their failure_reason and counted per reason, every reward figure leaves them out, each
 * component has its chart and its mean in the runs table, and the charts follow the list's filters.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, openViewer, waitText, type Browser, type Page } from './chromium.js';
import { ARTIFACTS, MASKED_PLAN, maskedFacts, PLAN_B, writeChartFile, writeMaskedFile } from './fixtures.js';

interface Fact {
  task: number;
  agent: string;
  correctness: number;
  format: number;
  reward: number;
  reason: string | null;
}
const FACTS: Fact[] = Object.entries(MASKED_PLAN).flatMap(([t, p]) => p.rollouts.map((code) => ({ task: Number(t), agent: p.agent, ...maskedFacts(code) })));

/** One bar per distinct value: labels and counts, as the charts show few distinct values. */
function bars(values: number[]): { labels: string[]; values: number[] } {
  const distinct = [...new Set(values)].sort((a, b) => a - b);
  return { labels: distinct.map(String), values: distinct.map((v) => values.filter((x) => x === v).length) };
}

/** What the charts must show for these rows, masked samples left out (computed from the plan). */
function expected(rows: Fact[]) {
  const kept = rows.filter((r) => r.reason === null);
  const perTask = new Map<number, number[]>();
  for (const r of kept) perTask.set(r.task, [...(perTask.get(r.task) ?? []), r.reward]);
  const passBins = [0, 0, 0, 0, 0, 0];
  for (const rs of perTask.values()) {
    // pass@1 of a task: the share of passed rollouts for 0/1 rewards, else the mean reward.
    const binary = rs.every((x) => x === 0 || x === 1);
    const p = binary ? rs.filter((x) => x === 1).length / rs.length : rs.reduce((a, b) => a + b, 0) / rs.length;
    passBins[p <= 0 ? 0 : p >= 1 ? 5 : p <= 0.25 ? 1 : p <= 0.5 ? 2 : p <= 0.75 ? 3 : 4]!++;
  }
  return {
    masked: rows.length - kept.length,
    reward: bars(kept.map((r) => r.reward)),
    passrate: passBins,
    correctness: bars(kept.map((r) => r.correctness)),
    format: bars(kept.map((r) => r.format)),
    mean: kept.reduce((a, r) => a + r.reward, 0) / kept.length,
    correctnessMean: kept.reduce((a, r) => a + r.correctness, 0) / kept.length,
    kept: kept.length,
  };
}

describe.skipIf(!haveChromium)('viewer: masked samples and reward components in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-masked-'));
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    writeMaskedFile(join(dir, 'masked.jsonl'));
    // Run B: no masked samples, no components.
    writeChartFile(join(dir, 'plain.jsonl'), PLAN_B);
    browser = await openViewer(dir, { jsonlPath: join(dir, 'masked.jsonl'), compareJsonlPaths: [join(dir, 'plain.jsonl')] });
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stat = (name: string) =>
    page.$$eval('#stats dt', (dts, n) => dts.find((dt) => dt.textContent === n)?.nextElementSibling?.textContent ?? null, name);
  const chart = (id: string) =>
    page.$eval(`#${id}`, (c) => ({ labels: JSON.parse(c.getAttribute('data-labels') ?? '[]') as string[], values: JSON.parse(c.getAttribute('data-values') ?? '[]') as number[] }));
  const figures = (): Promise<Record<string, string | null>> =>
    page.$$eval('#runs-table tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.getAttribute('data-figure'), tr.querySelector('td[data-run="a"]')?.textContent ?? null])));
  const caption = (kind: string) => page.textContent(`.chart-row[data-kind="${kind}"] .chart-caption`);

  it('counts masked samples per reason in the summary and leaves them out of the reward figures', async () => {
    const want = expected(FACTS);
    expect(await stat('Rows')).toBe(String(FACTS.length));
    expect(await stat('Masked samples')).toBe('3');
    expect(await stat('Rows with reward')).toBe(`${want.kept} (masked left out)`);
    expect(Number(await stat('Mean reward'))).toBeCloseTo(want.mean, 3);
    expect(await page.isVisible('#masked-box')).toBe(true);
    expect(await page.$$eval('#masked-body tr', (trs) => trs.map((tr) => tr.textContent))).toEqual(['2 ×capture_incomplete', '1 ×max_iteration']);
    expect(await page.textContent('#masked-title')).toContain('Masked samples: 3');
    expect(await chart('reward-chart')).toEqual(want.reward);
  });

  it('lists masked rows with a badge and their failure_reason, filters them, and shows the reason in the rollout', async () => {
    await page.selectOption('#masked-filter', 'only');
    await waitText(page, '#list-status', '3 matching rows');
    expect(await page.$$eval('#rows-body tr.masked .badge.masked', (bs) => bs.map((b) => b.textContent))).toEqual([
      'masked: capture_incomplete',
      'masked: max_iteration',
      'masked: capture_incomplete',
    ]);
    await page.click('#rows-body tr[data-index="3"]');
    await page.waitForSelector('#masked-note');
    expect(await page.textContent('#masked-note')).toContain('failure_reason: capture_incomplete');
    await page.selectOption('#masked-filter', 'exclude');
    await waitText(page, '#list-status', `${FACTS.length - 3} matching rows`);
    expect(await page.$$eval('#rows-body tr.masked', (trs) => trs.length)).toBe(0);
    await page.selectOption('#masked-filter', '');
    await waitText(page, '#list-status', `${FACTS.length} matching rows`);
  });

  it('draws reward, pass rate and one chart per component without the masked rows; the runs table has component and where-present means', async () => {
    const want = expected(FACTS);
    await page.click('#tab-charts');
    await page.waitForSelector('#charts[data-ready="1"]');
    await page.waitForSelector('#chart-breakdown-a');
    expect(await chart('chart-reward-a')).toEqual(want.reward);
    expect((await chart('chart-passrate-a')).values).toEqual(want.passrate);
    expect(await page.$$eval('.chart-row[data-kind="component"]', (ss) => ss.map((s) => s.getAttribute('data-component')))).toEqual(['correctness', 'format']);
    expect(await chart('chart-component-0-a')).toEqual(want.correctness);
    expect(await chart('chart-component-1-a')).toEqual(want.format);
    expect(await caption('reward')).toContain(`n=${want.kept} `);
    expect(await caption('reward')).toContain('3 masked left out');
    const table = await figures();
    expect(table['Masked (left out)']).toBe('3: capture_incomplete 2, max_iteration 1');
    expect(Number(table['Mean reward'])).toBeCloseTo(want.mean, 3);
    // The component's mean, then its pass@k over the tasks (masked rows leave tasks uneven; core's rule).
    expect(Number.parseFloat(table['Component correctness']!)).toBeCloseTo(want.correctnessMean, 3);
    expect(table['Component correctness']).toMatch(/ · pass@1 /);
    // used_tool is on task 0's 3 unmasked rows only: its mean over those, saying how many (the terminal summary's rule).
    expect(table['Mean used_tool']).toBe(`1 (3 of ${want.kept} rows)`);
    // A reward component as the breakdown's field.
    await page.selectOption('#group-by', 'reward_components.format');
    await page.waitForFunction(() => {
      const c = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#chart-breakdown-a');
      return c?.getAttribute('data-labels') === '["0.2","0"]';
    });
    const groups = await page.$$eval('table.breakdown tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)));
    const formatted = FACTS.filter((f) => f.format > 0);
    expect(groups).toEqual([
      ['0.2', String(formatted.length), String(formatted.filter((f) => f.reason !== null).length)],
      ['0', String(FACTS.length - formatted.length), '0'],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, 'charts-masked-components.png'), fullPage: true });
  });

  it("recomputes the charts for the list's filters: agent, reward range, masked, text", async () => {
    // Each case: its name, the filter the charts are then drawn for, how the page is told, and the rows it selects.
    const cases: [string, string, () => Promise<void>, Fact[]][] = [
      ['agent', 'agent=other_agent', () => page.selectOption('#agent', 'other_agent').then(() => undefined), FACTS.filter((f) => f.agent === 'other_agent')],
      ['reward ≥ 0.5', 'min_reward=0.5', async () => {
        await page.selectOption('#agent', '');
        await page.fill('#min-reward', '0.5');
        await page.click('#apply');
      }, FACTS.filter((f) => f.reward >= 0.5)],
      ['masked only', 'masked=only', async () => {
        await page.fill('#min-reward', '');
        await page.selectOption('#masked-filter', 'only');
      }, FACTS.filter((f) => f.reason !== null)],
      ['text', 'q=Task+3%3A', async () => {
        await page.selectOption('#masked-filter', '');
        await page.fill('#search', 'Task 3:');
        await page.click('#apply');
      }, FACTS.filter((f) => f.task === 3)],
    ];
    for (const [name, filter, apply, rows] of cases) {
      const want = expected(rows);
      const t0 = performance.now();
      await apply();
      await page.waitForFunction((f) => {
        const charts = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#charts');
        return charts?.getAttribute('data-ready') === '1' && charts.getAttribute('data-filter') === f;
      }, filter);
      console.log(`masked fixture: filter ${name} -> charts ${Math.round(performance.now() - t0)} ms`);
      const table = await figures();
      expect(table['Rows matching the filter'], name).toBe(String(rows.length));
      expect(table['Masked (left out)']!.split(':')[0], name).toBe(String(want.masked));
      if (want.kept) {
        expect(await chart('chart-reward-a'), name).toEqual(want.reward);
        expect((await chart('chart-passrate-a')).values, name).toEqual(want.passrate);
        expect(await chart('chart-component-0-a'), name).toEqual(want.correctness);
      } else {
        expect(await page.textContent('.chart-row[data-kind="reward"] .chart-card'), name).toContain('No numeric rewards.');
      }
    }
    expect(browser.errors, browser.errors.join('\n')).toEqual([]);
  });

  it('compares masked samples and component means of two runs', async () => {
    const want = expected(FACTS);
    await page.click('#reset');
    await page.waitForFunction(() => {
      const charts = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#charts');
      return charts?.getAttribute('data-ready') === '1' && charts.getAttribute('data-filter') === '';
    });
    const table = await page.$$eval('#runs-table tbody tr[data-figure="Component correctness"] td[data-run]', (tds) => tds.map((td) => td.textContent));
    expect(table.map((x) => (x === '–' ? x : Number.parseFloat(x!).toFixed(3)))).toEqual([want.correctnessMean.toFixed(3), '–']);
    await page.click('#tab-compare');
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector('#compare-summary')?.textContent?.includes('Component format') === true);
    const cells = await page.$$eval('#compare-summary dt', (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
    expect(cells['Masked A / B (left out)']).toBe('3 / 0');
    expect(cells['Component correctness A / B']).toBe(`${Number(want.correctnessMean.toPrecision(4))} / –`);
    expect(browser.errors, browser.errors.join('\n')).toEqual([]);
  });
});
