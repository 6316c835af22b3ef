/**
 * Plain text of a DOM subtree, one line per block: paragraphs, headings and table rows each on a
 * line, list items prefixed with "- ", table cells joined with " | ", whitespace in running text
 * collapsed (kept in <pre>). Works on any DOM implementation through the few members it reads.
 */

/** The DOM members the serializer reads (a subset of the standard Node interface). */
export interface TextNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  childNodes: ArrayLike<TextNode>;
}

const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;

/** Subtrees that never hold readable text. */
const SKIPPED = new Set([
  'SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'OBJECT', 'EMBED', 'HEAD', 'TITLE', 'META', 'LINK',
  'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION',
]);

/** Elements that start and end a line. */
const BLOCKS = new Set([
  'ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BODY', 'CAPTION', 'CENTER', 'DD', 'DETAILS', 'DIALOG', 'DIV', 'DL', 'DT',
  'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HGROUP', 'HR', 'HTML',
  'LEGEND', 'LI', 'MAIN', 'MENU', 'NAV', 'OL', 'P', 'PRE', 'SECTION', 'SUMMARY', 'TABLE', 'TBODY', 'TFOOT', 'THEAD', 'TR', 'UL',
]);

const WS_RUN = /[ \t\n\r\f\v\u00a0]+/g;

class LineWriter {
  readonly lines: string[] = [];
  private current = '';

  text(s: string): void {
    this.current += s;
  }

  /** Ends the current line (if it has any text). */
  flush(): void {
    const line = this.current.replace(WS_RUN, ' ').trim();
    if (line) this.lines.push(line);
    this.current = '';
  }

  /** Adds lines verbatim (preformatted text), trimming only their ends. */
  raw(block: string): void {
    this.flush();
    for (const l of block.split(/\r\n|\r|\n/)) {
      const line = l.trimEnd();
      if (line.trim()) this.lines.push(line);
    }
  }
}

function nameOf(node: TextNode): string {
  return node.nodeName.toUpperCase();
}

function rawText(node: TextNode): string {
  if (node.nodeType === TEXT || node.nodeType === CDATA) return node.nodeValue ?? '';
  if (node.nodeType !== ELEMENT) return '';
  const name = nameOf(node);
  if (SKIPPED.has(name)) return '';
  if (name === 'BR') return '\n';
  let out = '';
  const kids = node.childNodes;
  for (let i = 0; i < kids.length; i++) out += rawText(kids[i]!);
  return out;
}

/** Text of one table cell, on one line. */
function cellText(node: TextNode): string {
  return rawText(node).replace(WS_RUN, ' ').trim();
}

function walk(node: TextNode, out: LineWriter): void {
  if (node.nodeType === TEXT || node.nodeType === CDATA) {
    out.text(node.nodeValue ?? '');
    return;
  }
  if (node.nodeType !== ELEMENT && node.nodeType !== 9 && node.nodeType !== 11) return;
  const name = nameOf(node);
  if (SKIPPED.has(name)) return;
  if (name === 'BR') {
    out.flush();
    return;
  }
  if (name === 'PRE') {
    out.raw(rawText(node));
    return;
  }
  if (name === 'TR') {
    out.flush();
    const cells: string[] = [];
    const kids = node.childNodes;
    for (let i = 0; i < kids.length; i++) {
      const kid = kids[i]!;
      const kidName = kid.nodeType === ELEMENT ? nameOf(kid) : '';
      if (kidName === 'TD' || kidName === 'TH') {
        const t = cellText(kid);
        if (t) cells.push(t);
      }
    }
    out.text(cells.join(' | '));
    out.flush();
    return;
  }
  const block = BLOCKS.has(name);
  if (block) out.flush();
  if (name === 'LI') out.text('- ');
  const kids = node.childNodes;
  for (let i = 0; i < kids.length; i++) walk(kids[i]!, out);
  if (block) out.flush();
}

/** The subtree's text, blocks on their own lines (no empty lines). */
export function blockText(root: TextNode): string {
  const out = new LineWriter();
  walk(root, out);
  out.flush();
  // A list item whose text is only the marker carries nothing.
  return out.lines.filter((l) => l !== '-').join('\n');
}
