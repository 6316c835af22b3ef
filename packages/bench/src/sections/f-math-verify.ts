// Throughput and latency of the library check.
// Run after `pnpm build`: node packages/bench/dist/src/sections/f-math-verify.js [seconds-per-mode]
import { performance } from 'node:perf_hooks';
import { MathVerifier, verifyAnswerWithLibrary } from '@nemo-gym/math-verify';

const CASES: [string, string][] = [
  ['32', 'Adding the terms gives 12 + 20, so the answer is $\\boxed{32}$.'],
  ['\\(\\frac{333}{1997}\\)', 'Counting the pairs we get \\boxed{\\frac{83}{499}}'],
  ['\\(\\sqrt{2}\\)', 'Hence the minimum is $\\boxed{\\sqrt{2}}$.'],
  ['-3', 'Checking both roots, only $x=-4$ works, so \\boxed{-4}.'],
  ['\\frac{1}{2}', 'The probability is 0.5.'],
  ['\\frac{2}{3}', 'Final Answer: The final answer is $\\frac{4}{6}$. I hope it is correct.'],
  ['x^2+2x+1', 'Expanding gives $(x+1)^2$.'],
  ['(1,2)', 'The solution set is $(1, 2)$.'],
  ['\\{1,2,3\\}', 'The roots are $1$, $2$ and $3$.'],
  ['25\\%', 'That is an increase of 25%.'],
  ['1000', 'In total 1,000 marbles.'],
  ['2\\sqrt{3}', '\\[\\boxed{\\sqrt{12}}\\]'],
  ['9\\pi', 'The area is $9\\pi \\text{ cm}^2$'],
  ['y=2x+1', 'So the line is $y = 1 + 2x$.'],
  ['(-\\infty, 3)', 'We need $x < 3$.'],
  ['\\text{(B)}', 'The correct choice is \\boxed{B}'],
  ['\\frac{\\pi}{4}', 'Therefore $\\theta = \\frac{\\pi}{4}$'],
  ['7', 'Lots of reasoning here. '.repeat(200) + 'So the answer is \\boxed{7}.'],
  ['\\frac{(3-\\sqrt{3})(2-\\sqrt{3})^{2016}+(3+\\sqrt{3})(2+\\sqrt{3})^{2016}}{6}', '\\boxed{\\dfrac{(1+\\sqrt{3})^{4033}-(1-\\sqrt{3})^{4033}}{2^{2017}\\sqrt{3}}}'],
  ['0.3333', 'about 1/3'],
];

const seconds = Number(process.argv[2] ?? 5);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function report(mode: string, lat: number[], elapsedMs: number): void {
  lat.sort((a, b) => a - b);
  console.log(
    `${mode.padEnd(28)} checks=${lat.length} checks/s=${(lat.length / (elapsedMs / 1000)).toFixed(0)} ` +
      `p50=${pct(lat, 50).toFixed(2)}ms p99=${pct(lat, 99).toFixed(2)}ms max=${lat[lat.length - 1]!.toFixed(2)}ms`,
  );
}

// inline: one thread, one check at a time
{
  for (const [e, g] of CASES) verifyAnswerWithLibrary(e, g);
  const lat: number[] = [];
  const start = performance.now();
  let i = 0;
  while (performance.now() - start < seconds * 1000) {
    const [e, g] = CASES[i++ % CASES.length]!;
    const t = performance.now();
    verifyAnswerWithLibrary(e, g);
    lat.push(performance.now() - t);
  }
  report('inline (1 thread)', lat, performance.now() - start);
}

// checker-process pool: many checks in flight
for (const size of [2, 4]) {
  const v = new MathVerifier({ size, timeoutMs: 10_000 });
  await Promise.all(CASES.map(([e, g]) => v.check(e, g)));
  const lat: number[] = [];
  const start = performance.now();
  let i = 0;
  const inFlight = size * 4;
  const loop = async () => {
    while (performance.now() - start < seconds * 1000) {
      const [e, g] = CASES[i++ % CASES.length]!;
      const t = performance.now();
      await v.check(e, g);
      lat.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  report(`process pool size=${size} (${inFlight} in flight)`, lat, performance.now() - start);
  await v.close();
}
