/**
 * Tasks, sorting, filters and the comparison of two collections in real headless Chromium.
 * Screenshots of the task view and of the comparison are written to the temp folder.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, openViewer, waitText, type Browser, type Page } from './chromium.js';
import { FAILURES_A, PLAN_A, PLAN_B, writeTaggedFile } from './fixtures.js';

describe.skipIf(!haveChromium)('viewer tasks and comparison in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-cmp-'));
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    writeTaggedFile(join(dir, 'run_a.jsonl'), PLAN_A, FAILURES_A);
    writeTaggedFile(join(dir, 'run_b.jsonl'), PLAN_B);
    browser = await openViewer(dir, { jsonlPath: join(dir, 'run_a.jsonl'), compareJsonlPath: join(dir, 'run_b.jsonl') });
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  type Doc = { querySelector(s: string): { textContent: string | null } | null };
  const waitStatus = (text: string) => waitText(page, '#list-status', text);
  const column = (n: number) => page.$$eval(`#rows-body tr td:nth-child(${n})`, (tds) => tds.map((td) => td.textContent));
  const headers = () => page.$$eval('#rows-head th', (ths) => ths.map((th) => th.textContent));
  const stats = () => page.$$eval('#stats dt', (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));

  it('rollouts: task and agent columns, scores without collector tags, sortable by reward, filtered by outcome', async () => {
    expect(await headers()).toEqual(['#', 'Task', 'Reward', 'Agent', 'Response ID', 'Calls', 'Scores', 'First user message']);
    expect(await page.textContent('#list-status')).toBe('23 matching rows');
    const scores = await column(7);
    expect(scores.every((s) => s === 'accuracy=true set_overlap=0.5' || s === 'accuracy=false set_overlap=0')).toBe(true);
    expect(await stats()).toMatchObject({ Tasks: '6', 'pass@k': '0.6667', 'pass@1': '0.4028', 'Collection failures': '1' });
    expect(await page.textContent('#failures-title')).toBe('Collection failures: 1 rollout recorded as failed (not in the file), by reason');

    await page.click('#rows-head th[data-sort="reward"] button');
    await page.waitForSelector('#rows-head th[data-sort="reward"][aria-sort="ascending"]');
    await waitStatus('23 matching rows');
    expect(await column(3)).toEqual([...Array(14).fill('0'), ...Array(9).fill('1')]);
    await page.click('#rows-head th[data-sort="reward"] button');
    await page.waitForSelector('#rows-head th[data-sort="reward"][aria-sort="descending"]');
    await page.waitForFunction(() => (globalThis as unknown as { document: Doc }).document.querySelector('#rows-body tr td:nth-child(3)')?.textContent === '1');
    expect(await column(3)).toEqual([...Array(9).fill('1'), ...Array(14).fill('0')]);

    await page.selectOption('#outcome', 'failed');
    await waitStatus('14 matching rows');
    expect(new Set(await column(3))).toEqual(new Set(['0']));
    await page.selectOption('#agent', 'simple_agent');
    await waitStatus('6 matching rows');
    expect(new Set(await column(4))).toEqual(new Set(['simple_agent']));
    await page.click('#reset');
    await waitStatus('23 matching rows');
  });

  it('tasks: one line per task with pass@k, sortable, filterable, expanding to its rollouts', async () => {
    await page.click('#tab-tasks');
    await waitStatus('6 tasks');
    expect(await headers()).toEqual(['Task', 'k', 'Passed', 'mean@k', 'pass@k', 'Failed', 'Agents', 'Prompt']);
    expect(await column(1)).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(await column(4)).toEqual(['1', '0', '0.5', '0.25', '0', '0.6667']);
    expect(await column(5)).toEqual(['1', '0', '1', '1', '0', '1']);
    expect(await column(6)).toEqual(['0', '0', '0', '0', '0', '1']);
    // Min/max reward belong to the rollouts view; the task filter shows instead.
    expect(await page.isVisible('#min-reward')).toBe(false);
    expect(await page.isVisible('#task-outcome')).toBe(true);

    await page.click('#rows-head th[data-sort="mean"] button');
    await page.click('#rows-head th[data-sort="mean"] button');
    await page.waitForSelector('#rows-head th[data-sort="mean"][aria-sort="descending"]');
    await page.waitForFunction(() => (globalThis as unknown as { document: Doc }).document.querySelector('#rows-body tr td')?.textContent === '0');
    expect(await column(1)).toEqual(['0', '5', '2', '3', '1', '4']);

    await page.click('#rows-body tr.task[data-task="#2"]');
    await page.waitForSelector('#rows-body tr.sub');
    const subs = await page.$$eval('#rows-body tr.sub', (trs) => trs.map((tr) => [tr.getAttribute('data-reward'), tr.previousElementSibling?.getAttribute('data-task') ?? 'sub']));
    expect(subs.map((s) => s[0])).toEqual(['1', '0', '0', '1']);
    expect(subs[0]![1]).toBe('#2');
    expect(await page.getAttribute('#rows-body tr.task[data-task="#2"]', 'aria-expanded')).toBe('true');
    const shot = join(tmpdir(), 'ng-viewer-tasks.png');
    await page.screenshot({ path: shot });
    console.log(`viewer tasks screenshot: ${shot}`);
    // A rollout of the task opens in the detail panel.
    await page.click('#rows-body tr.sub >> nth=1');
    await page.waitForSelector('#conversation .bubble');
    expect(await page.textContent('#detail h2')).toBe('Sample ' + (Number(await page.getAttribute('#rows-body tr.sub >> nth=1', 'data-index')) + 1) + ' - Responses ID resp_t2_r1');
    // Collapsing removes the rollouts again.
    await page.click('#rows-body tr.task[data-task="#2"]');
    expect(await page.$$eval('#rows-body tr.sub', (t) => t.length)).toBe(0);

    await page.selectOption('#task-outcome', 'never');
    await waitStatus('2 tasks');
    expect(await column(1)).toEqual(['1', '4']);
    await page.click('#reset');
    await waitStatus('6 tasks');
  });

  it('compare: per-task reward deltas, the largest regression first, and the two rollouts side by side', async () => {
    await page.click('#tab-compare');
    await waitStatus('7 tasks');
    expect(await headers()).toEqual(['Task', 'A mean', 'B mean', 'Δ (B − A)', 'A pass@k', 'B pass@k', 'Prompt']);
    expect(await column(1)).toEqual(['2', '0', '1', '5', '3', '4', '6']);
    expect(await column(4)).toEqual(['-0.5', '0', '+0.25', '+0.3333', '+0.75', '–', '–']);
    expect(await column(3)).toContain('absent');
    const summary = await page.$$eval('#compare-summary dt', (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
    expect(summary).toMatchObject({ A: 'run_a.jsonl', B: 'run_b.jsonl', 'Matched by': 'task index', Matched: '5', Improved: '3', Regressed: '1', Unchanged: '1', 'Only A / only B': '1 / 1' });

    await page.click('#rows-body tr.cmp[data-task="#2"]');
    await page.waitForSelector('#conversation-a .bubble');
    await page.waitForSelector('#conversation-b .bubble');
    expect(await page.textContent('#detail h2')).toBe('Task 2: A 0.5 → B 0 (Δ -0.5)');
    expect(await page.textContent('#side-a h2')).toContain('resp_t2_r0');
    expect(await page.textContent('#side-b h2')).toContain('resp_t2_r0');
    // Pick B's third rollout.
    await page.click('#side-b .picks button >> nth=2');
    await page.waitForFunction(() => /resp_t2_r2/.test((globalThis as unknown as { document: Doc }).document.querySelector('#side-b h2')?.textContent ?? ''));
    const rewardB = await page.$$eval('#side-b table.fields tr', (trs) => trs.filter((tr) => tr.getAttribute('data-key') === 'reward').map((tr) => tr.lastElementChild?.textContent));
    expect(rewardB).toEqual(['0']);
    const shot = join(tmpdir(), 'ng-viewer-compare.png');
    await page.screenshot({ path: shot });
    console.log(`viewer comparison screenshot: ${shot}`);
    expect(existsSync(shot)).toBe(true);

    await page.selectOption('#change', 'regressed');
    await waitStatus('1 task');
    expect(await column(1)).toEqual(['2']);
    expect(browser.errors, browser.errors.join('\n')).toEqual([]);
  });
});
