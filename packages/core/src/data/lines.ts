/**
 * Streaming line reader for JSONL files: `\n`, `\r\n` and a lone `\r` end a line (Python's
 * universal newlines); a final line without a newline is returned; nothing beyond one line is
 * held in memory.
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface Line {
  /** 1-based line number in the file. */
  lineNo: number;
  /** The line without its terminator. */
  text: string;
}

export async function* readLines(path: string): AsyncGenerator<Line> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let lineNo = 0;
  let pendingCR = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let text = decoder.write(chunk);
    if (pendingCR) {
      // A "\r" ended the previous chunk; a "\n" right after it belongs to the same terminator.
      if (text.startsWith('\n')) text = text.slice(1);
      pendingCR = false;
    }
    let start = 0;
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c !== 0x0a && c !== 0x0d) continue;
      const piece = carry + text.slice(start, k);
      carry = '';
      lineNo++;
      yield { lineNo, text: piece };
      if (c === 0x0d) {
        if (k + 1 < text.length) {
          if (text.charCodeAt(k + 1) === 0x0a) k++;
        } else pendingCR = true;
      }
      start = k + 1;
    }
    carry += text.slice(start);
  }
  carry += decoder.end();
  if (carry.length > 0) {
    lineNo++;
    yield { lineNo, text: carry };
  }
}
