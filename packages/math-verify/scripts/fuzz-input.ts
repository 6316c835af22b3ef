// Random LaTeX-ish answers for robustness testing (shared by the fuzz test and scripts/fuzz.ts).

import { mulberry32 } from '@nemo-gym/core/data';

const PIECES = [
  '\\frac{', '}{', '}', '{', '\\sqrt{', '\\sqrt[3]{', '^', '_', '(', ')', '[', ']', '\\{', '\\}', '|', ',', ';', '=', '<', '\\le',
  '+', '-', '*', '/', '\\cdot', '\\times', '\\pi', 'e', 'x', 'y', 'i', '\\infty', '\\cup', '\\pm', '!', '%', '\\%', '.', '0', '1',
  '2', '7', '12', '3.14', '1,000', '\\text{cm}', '\\text{and}', ' and ', ' ', '\\left(', '\\right)', '\\sin', '\\log_2', '\\ln',
  '\\boxed{', '$', '\\(', '\\)', '\\[', '\\]', '\\begin{pmatrix}', '\\end{pmatrix}', '&', '\\\\', '\\dfrac', '^\\circ', 'answer: ',
  'final answer is ', ' I hope', '\\binom{', '\\alpha', '\\mathbb{R}', '\\emptyset', '\\in', '\\approx', '10^{10^{10}}', '\\\\frac',
];

/** Deterministic seeded PRNG (mulberry32, shared with the core). */
export const rng = mulberry32;

export function randomLatex(rand: () => number, maxPieces = 30): string {
  const n = 1 + Math.floor(rand() * maxPieces);
  let s = '';
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(rand() * PIECES.length)]!;
  return s;
}
