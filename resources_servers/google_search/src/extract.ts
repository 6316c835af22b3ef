/**
 * Main-text extraction, run in worker threads (a large page takes tens of milliseconds of CPU).
 * HTML goes through Mozilla's Readability on a linkedom document; the article is written out as
 * block-per-line text. When Readability finds no article, the body's text without navigation,
 * header, footer, aside and form elements is used instead.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { cutLongText } from './cut.js';
import { blockText, type TextNode } from './text.js';

export interface ExtractInput {
  body: string;
  /** `html` for HTML/XHTML, `text` for plain text (kept as it is). */
  kind: 'html' | 'text';
  url: string;
}

/** Never main text: removed before Readability looks at the page. */
const NEVER_CONTENT = 'nav, aside, footer, script, style, noscript, template, [role="navigation"], [role="contentinfo"], [role="complementary"]';
/** Also removed when the whole body is used. */
const BOILERPLATE = `${NEVER_CONTENT}, header, form, [role="banner"]`;

type QueryRoot = TextNode & { querySelectorAll(s: string): ArrayLike<{ remove(): void }> };

function removeAll(root: QueryRoot, selector: string): void {
  const found = root.querySelectorAll(selector);
  for (let i = found.length - 1; i >= 0; i--) found[i]!.remove();
}

function fallbackText(html: string): string {
  const { document } = parseHTML(html);
  const root = (document.body ?? document.documentElement) as unknown as QueryRoot | null;
  if (!root) return '';
  removeAll(root, BOILERPLATE);
  return blockText(root);
}

/** The readable text of a page, cut to the tool's length limit ("" when there is none). */
export function extractText(input: ExtractInput): string {
  let text: string;
  if (input.kind === 'text') {
    text = input.body.replace(/\r\n?/g, '\n').trim();
  } else {
    const { document } = parseHTML(input.body);
    if (document.documentElement) removeAll(document.documentElement as unknown as QueryRoot, NEVER_CONTENT);
    let article: string | null = null;
    try {
      const parsed = new Readability<string>(document as unknown as ConstructorParameters<typeof Readability>[0], {
        serializer: (el) => blockText(el as unknown as TextNode),
      }).parse();
      article = parsed?.content ?? null;
    } catch {
      article = null;
    }
    text = article && article.trim() ? article : fallbackText(input.body);
  }
  return cutLongText(text);
}
