/** Debian's /usr/bin/chromium, headless, driven by playwright-core, for the viewer's browser tests. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startViewer, type ViewerHandle, type ViewerOptions } from '../src/index.js';

export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.log(`skipping viewer browser tests: ${CHROMIUM} not found (apt-get install -y chromium)`);

type Context = import('playwright-core').BrowserContext;
export type Page = import('playwright-core').Page;

export interface Browser {
  page: Page;
  /** Console errors and uncaught exceptions of the page. */
  errors: string[];
  close: () => Promise<void>;
}

/** A fresh profile in `dir`, one page 1400×1000, no network besides what the page asks for. */
export async function launchChromium(dir: string): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const context: Context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 1000 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors, close: () => context.close() };
}

type Doc = { querySelector(s: string): { textContent: string | null } | null };
/** Runs in the page (through the debugger protocol, so the page's CSP does not apply): the text of `sel` is `text`. */
const textIs = ([sel, text]: [string, string]) => (globalThis as unknown as { document: Doc }).document.querySelector(sel)?.textContent === text;

/** Waits until the element `sel` of the page holds exactly `text`. */
export function waitText(page: Page, sel: string, text: string): Promise<unknown> {
  return page.waitForFunction(textIs, [sel, text] as [string, string]);
}

/** A viewer started on `options` and a headless page open on it, ready (`body[data-ready]`); `close` ends both. */
export async function openViewer(dir: string, options: ViewerOptions): Promise<Browser & { viewer: ViewerHandle }> {
  const viewer = await startViewer({ port: 0, ...options });
  let browser: Browser;
  try {
    browser = await launchChromium(dir);
    await browser.page.goto(viewer.url);
    await browser.page.waitForSelector('body[data-ready="1"]');
  } catch (err) {
    await viewer.close();
    throw err;
  }
  return {
    ...browser,
    viewer,
    close: async () => {
      await browser.close();
      await viewer.close();
    },
  };
}
