import { describe, expect, it } from 'vitest';
import { parseHTML } from 'linkedom';
import { cutLongText, hasMoreWordsThan } from '../src/cut.js';
import { decodeBody } from '../src/page.js';
import { blockText, type TextNode } from '../src/text.js';
import { extractText } from '../src/extract.js';

describe('block text', () => {
  it('one line per block, list markers, table rows with | between cells, <pre> kept', () => {
    const { document } = parseHTML(
      '<div><h2>Title</h2><p>Some   <b>bold</b>\n text</p><ul><li>one</li><li>two <i>items</i></li><li></li></ul>' +
        '<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td> 1 </td></tr></table><pre>x = 1\n  y = 2</pre>line<br>break<script>no()</script></div>',
    );
    expect(blockText(document.querySelector('div') as unknown as TextNode)).toBe('Title\nSome bold text\n- one\n- two items\nk | v\na | 1\nx = 1\n  y = 2\nline\nbreak');
  });

  it('falls back to the body without navigation when Readability finds no article', () => {
    const text = extractText({ kind: 'html', url: 'http://x/', body: '<html><body><nav>Menu Home</nav><div>Short note.</div><footer>(c) Site</footer></body></html>' });
    expect(text).toBe('Short note.');
  });
});

describe("the 10,000-word cut (Python's split and code-point slicing)", () => {
  it('counts words on Python whitespace and stops at the limit', () => {
    expect(hasMoreWordsThan('a b\u3000c\u0085d', 3)).toBe(true);
    expect(hasMoreWordsThan('a b\u3000c\ufeffd', 3)).toBe(false); // U+FEFF is not whitespace in Python
  });
  it('keeps exactly 10,000 words; cuts 10,001 by code points', () => {
    const exact = Array.from({ length: 10_000 }, () => 'w').join(' ');
    expect(cutLongText(exact)).toBe(exact);
    const emoji = Array.from({ length: 10_001 }, () => '😀').join(' ');
    const cut = cutLongText(emoji);
    expect([...cut].length).toBe(10_003);
    expect(cut).toBe(`${[...emoji].slice(0, 5000).join('')}...${[...emoji].slice(-5000).join('')}`);
  });
});

describe('charset decoding', () => {
  const cp1252 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x93, 0x71, 0x94]); // café “q”
  it('header charset, then meta, then UTF-8 if valid, else windows-1252', () => {
    expect(decodeBody(cp1252, 'text/html; charset=windows-1252', true)).toBe('café “q”');
    expect(decodeBody(cp1252, 'text/html', true)).toBe('café “q”');
    expect(decodeBody(Buffer.from('café', 'utf8'), 'text/html', true)).toBe('café');
    expect(decodeBody(Buffer.concat([Buffer.from('<meta charset="iso-8859-5">'), Buffer.from([0xb4])]), 'text/html', true)).toBe('<meta charset="iso-8859-5">Д');
    expect(decodeBody(Buffer.from('\ufeffhi', 'utf8'), 'text/html; charset=latin1', true)).toBe('hi');
    expect(decodeBody(Buffer.from('é', 'utf8'), 'text/html; charset=no-such-charset', true)).toBe('é');
  });
});
