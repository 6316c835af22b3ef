/**
 * The viewer in real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core):
 * load a file, filter, search, open a rollout, and check that markup from the file shows as text.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, type ViewerHandle } from '../src/index.js';
import { haveChromium, launchChromium, waitText, type Browser, type Page } from './chromium.js';
import { writeSmallFile, XSS_TOOL_OUTPUT, XSS_USER } from './fixtures.js';

describe.skipIf(!haveChromium)('viewer in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-browser-'));
  let viewer: ViewerHandle;
  let browser: Browser;
  let page: Page;
  let consoleErrors: string[] = [];

  beforeAll(async () => {
    const file = join(dir, 'rollouts.jsonl');
    writeSmallFile(file);
    viewer = await startViewer({ jsonlPath: file, port: 0 });
    browser = await launchChromium(dir);
    page = browser.page;
    consoleErrors = browser.errors;
  });

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Page-side functions (run through the debugger protocol, so the page's CSP does not apply).
  const waitStatus = (text: string) => waitText(page, '#list-status', text);
  const rowIndexes = () => page.$$eval('#rows-body tr', (trs) => trs.map((tr) => Number(tr.getAttribute('data-index'))));

  it('loads the file: summary, chart, metrics and the first page of rows', async () => {
    await page.goto(viewer.url);
    await page.waitForSelector('body[data-ready="1"]');
    expect(await page.textContent('#file-name')).toBe('rollouts.jsonl');
    expect(await rowIndexes()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await page.$eval('#reward-chart', (c) => (JSON.parse(c.getAttribute('data-values') ?? '[]') as number[]).length)).toBe(3);
    expect(await page.textContent('#metrics')).toContain('"Json-dumped number of words (proxy for token count)"');
    expect(await page.textContent('#list-status')).toBe('12 matching rows');
    // The invalid line is listed and marked.
    expect(await page.getAttribute('#rows-body tr[data-index="7"]', 'class')).toContain('invalid');
  });

  it('filters by reward and by text', async () => {
    await page.fill('#min-reward', '1');
    await page.click('#apply');
    await waitStatus('4 matching rows');
    expect(await rowIndexes()).toEqual([0, 3, 6, 9]);
    await page.click('#reset');
    await waitStatus('12 matching rows');
    await page.fill('#search', 'héllo');
    await page.press('#search', 'Enter');
    await waitStatus('1 matching row');
    expect(await rowIndexes()).toEqual([4]);
  });

  it('shows markup from the file as text, never as HTML', async () => {
    await page.click('#rows-body tr[data-index="4"]');
    await page.waitForSelector('#conversation .bubble');
    const texts = await page.$$eval('#conversation .bubble .body', (b) => b.map((x) => x.textContent));
    expect(texts).toContain(XSS_USER);
    expect(texts).toContain(XSS_TOOL_OUTPUT);
    expect(texts).toContain('<iframe src="javascript:window.__xss=4"></iframe>');
    expect(await page.$$eval('#detail img, #detail script, #detail iframe, #rows-body img', (n) => n.length)).toBe(0);
    expect(await page.evaluate(() => typeof (globalThis as { __xss?: unknown }).__xss)).toBe('undefined');
    await page.screenshot({ path: join(tmpdir(), 'ng-viewer-markup.png') });
    // The list preview shows the same markup as text.
    expect(await page.textContent('#rows-body tr[data-index="4"] td:last-child')).toContain('<script>window.__xss = 1</script>');
  });

  it('renders a rollout as a conversation with turns, steps, reasoning, tool calls and outputs', async () => {
    await page.click('#reset');
    await waitStatus('12 matching rows');
    await page.click('#rows-body tr[data-index="3"]');
    await waitText(page, '#detail h2', 'Sample 4 - Responses ID resp_000003');
    const titles = await page.$$eval('#conversation .bubble h3', (h) => h.map((x) => x.textContent));
    expect(titles).toEqual([
      'Turn 0 Step 0 - System message',
      'Turn 1 Step 0 - User message',
      'Turn 1 Step 0 - Reasoning',
      'Turn 1 Step 1 - Function call - `get_weather` (tool call ID `call_3`)',
      'Turn 1 Step 1 - Function call output (tool call ID `call_3`)',
      'Turn 1 Step 1 - Assistant message',
    ]);
    const bodies = await page.$$eval('#conversation .bubble .body', (b) => b.map((x) => x.textContent));
    expect(bodies[3]).toBe('Function call name `get_weather`\n{\n    "city": "city 3"\n}');
    expect(bodies[4]).toContain('"weather_description": "cold"');
    const fields = await page.$$eval('#detail table.fields tr', (trs) => trs.map((tr) => tr.getAttribute('data-key')));
    expect(fields).toEqual(['reward', 'accuracy', 'category', 'set_overlap']);
    const shot = join(tmpdir(), 'ng-viewer-screenshot.png');
    await page.screenshot({ path: shot, fullPage: false });
    console.log(`viewer screenshot: ${shot}`);
    expect(existsSync(shot)).toBe(true);
    expect(new URL(page.url()).hash).toBe('#row=4');
    expect(consoleErrors, consoleErrors.join("\n")).toEqual([]);
  });

  it('opens the row named in the address (#row=N, 1-based) on load', async () => {
    await page.goto("about:blank");
    await page.goto(`${viewer.url}#row=3`);
    await page.waitForSelector('body[data-ready="1"]');
    expect(await page.textContent('#detail h2')).toBe('Sample 3 - Responses ID resp_000002');
    expect(await page.getAttribute('#rows-body tr[data-index="2"]', 'class')).toContain('selected');
  });
});
