// One-minute fuzz run: random LaTeX answers through the checker-process pool with a hard time limit.
// Run after `pnpm build`: node packages/math-verify/dist/scripts/fuzz.js [seconds] [seed]
import { MathVerifier } from '../src/index.js';
import { randomLatex, rng } from './fuzz-input.js';

const seconds = Number(process.argv[2] ?? 60);
const seed = Number(process.argv[3] ?? Date.now() % 1e9);
const rand = rng(seed);
const verifier = new MathVerifier({ size: 2, timeoutMs: 2000 });
const end = Date.now() + seconds * 1000;
let checks = 0;
let timeouts = 0;
let ones = 0;
while (Date.now() < end) {
  const batch = Array.from({ length: 16 }, () => [randomLatex(rand, 12), randomLatex(rand, 40)] as const);
  const results = await Promise.all(batch.map(([g, p]) => verifier.check(g, p)));
  for (const r of results) {
    if (r.reward !== 0 && r.reward !== 1) throw new Error(`bad reward ${String(r.reward)}`);
    if (r.timedOut) timeouts++;
    if (r.reward === 1) ones++;
  }
  checks += batch.length;
}
await verifier.close();
console.log(JSON.stringify({ seed, seconds, checks, reward_one: ones, timeouts }));
