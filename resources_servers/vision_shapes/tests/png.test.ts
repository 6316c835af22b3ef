import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodePng } from '../src/png.js';

describe('encodePng', () => {
  it('writes a PNG whose header and pixels read back', () => {
    const pixels = Uint8Array.from({ length: 3 * 2 * 3 }, (_, i) => (i * 37) % 256);
    const file = encodePng(3, 2, pixels);
    expect(file.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(file.subarray(12, 16).toString('ascii')).toBe('IHDR');
    expect([file.readUInt32BE(16), file.readUInt32BE(20), file[24], file[25]]).toEqual([3, 2, 8, 2]);
    const idatLen = file.readUInt32BE(33);
    expect(file.subarray(37, 41).toString('ascii')).toBe('IDAT');
    const raw = inflateSync(file.subarray(41, 41 + idatLen));
    expect([...raw]).toEqual([0, ...pixels.subarray(0, 9), 0, ...pixels.subarray(9)]);
    expect(() => encodePng(2, 2, new Uint8Array(5))).toThrow(/expected 12 bytes/);
  });
});
