import { describe, expect, it } from 'vitest';
import { toLaxInt } from '@nemo-gym/core/py';

// Results of pydantic 2.13 validating `x: int` in lax mode.
const CASES: [unknown, number | null][] = [
  [true, 1],
  [false, 0],
  ['711', 711],
  [' 711 ', 711],
  ['\t711\n', 711],
  ['\u00a0711', 711],
  ['711.0', 711],
  ['711.00', 711],
  ['7_11', 711],
  ['1_000_000', 1000000],
  ['+5', 5],
  ['-5', -5],
  ['0711', 711],
  [711.0, 711],
  [711.5, null],
  ['711.', null],
  ['1e3', null],
  ['0x10', null],
  ['_1', null],
  ['1__0', null],
  ['1_', null],
  ['711.0_0', null],
  ['.0', null],
  ['+-1', null],
  ['- 1', null],
  ['1.0e0', null],
  ['\uff11\uff12', null],
  ['\u0663', null],
  ['', null],
  [null, null],
  [[1], null],
];

describe('pydantic lax int', () => {
  for (const [input, expected] of CASES) {
    it(`${JSON.stringify(input)} -> ${expected}`, () => {
      expect(toLaxInt(input)).toBe(expected);
    });
  }
});
