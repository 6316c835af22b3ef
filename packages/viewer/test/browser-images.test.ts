/**
 * Image inputs in the viewer, in real headless Chromium: an inline PNG data URL is drawn, while a
 * remote URL, a non-image data URL and an oversized one are shown as text and never loaded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePng, pngDataUrl } from '../../../resources_servers/vision_shapes/src/png.js';
import { startViewer, type ViewerHandle } from '../src/index.js';
import { haveChromium, launchChromium, type Browser } from './chromium.js';

/** A 64x48 picture: left half red, right half blue. */
function picture(): string {
  const rgb = new Uint8Array(64 * 48 * 3);
  for (let i = 0; i < 64 * 48; i++) rgb.set(i % 64 < 32 ? [220, 30, 30] : [30, 60, 220], i * 3);
  return pngDataUrl(encodePng(64, 48, rgb));
}

describe.skipIf(!haveChromium)('viewer: image inputs in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-images-'));
  let viewer: ViewerHandle;
  let browser: Browser;
  const remoteRequests: string[] = [];

  beforeAll(async () => {
    const html = `data:text/html;base64,${Buffer.from('<script>window.pwned=1</script>').toString('base64')}`;
    const row = {
      responses_create_params: {
        input: [
          {
            role: 'user',
            type: 'message',
            content: [
              { type: 'input_text', text: 'How many colours?' },
              { type: 'input_image', image_url: picture(), detail: 'low' },
              { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
              { type: 'input_image', image_url: html, detail: 'auto' },
              { type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(9 * 1024 * 1024)}`, detail: 'auto' },
            ],
          },
        ],
      },
      response: {
        id: 'resp_img', created_at: 1, model: 'vlm', object: 'response', parallel_tool_calls: true, tool_choice: 'auto', tools: [],
        output: [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '\\boxed{2}', annotations: [] }] }],
      },
      reward: 1,
    };
    const file = join(dir, 'vision.jsonl');
    writeFileSync(file, `${JSON.stringify(row)}\n`);
    viewer = await startViewer({ jsonlPath: file, port: 0 });
    browser = await launchChromium(dir);
    browser.page.on('request', (r) => {
      if (!r.url().startsWith(viewer.url) && !r.url().startsWith('data:')) remoteRequests.push(r.url());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('draws the inline PNG and shows the other images as text, loading nothing remote', async () => {
    const page = browser.page;
    await page.goto(viewer.url);
    await page.waitForSelector('body[data-ready="1"]');
    await page.click('#rows-body tr[data-index="0"]');
    await page.waitForSelector('#conversation img.input-image');
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null } }).document.querySelector('#conversation img.input-image');
      return img !== null && img.complete && img.naturalWidth > 0;
    });
    const images = await page.$$eval('#conversation img', (imgs) => imgs.map((i) => ({ w: (i as unknown as { naturalWidth: number }).naturalWidth, h: (i as unknown as { naturalHeight: number }).naturalHeight, src: i.getAttribute('src')!.slice(0, 22) })));
    expect(images).toEqual([{ w: 64, h: 48, src: 'data:image/png;base64,' }]);
    const titles = await page.$$eval('#conversation .bubble h3', (h) => h.map((x) => x.textContent));
    expect(titles.filter((t) => t!.includes('image'))).toEqual([
      'Turn 1 Step 0 - User message - image (detail low)',
      'Turn 1 Step 0 - User message - image (detail auto)',
      'Turn 1 Step 0 - User message - image (detail auto)',
      'Turn 1 Step 0 - User message - image (detail auto)',
    ]);
    const bodies = await page.$$eval('#conversation .bubble .body', (b) => b.map((x) => x.textContent));
    expect(bodies).toContain('[remote image, not loaded] https://example.com/cat.png');
    expect(bodies.some((t) => t!.startsWith('[image not shown: not a base64 png, jpeg, gif or webp data URL'))).toBe(true);
    expect(bodies.some((t) => t!.startsWith('[image not shown: larger than 8 MB'))).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(remoteRequests).toEqual([]);
    // The drawn picture: red on the left, blue on the right.
    const box = (await page.$('#conversation img.input-image'))!;
    await box.screenshot({ path: join(tmpdir(), 'ng-viewer-image.png') });
    expect(browser.errors).toEqual([]);
  });
});
