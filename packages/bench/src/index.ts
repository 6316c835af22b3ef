/**
 * @nemo-gym/bench: the benchmarks of `ng-bench`, one module per section under sections/ (the
 * component ones also run on their own from dist/). Only ng-bench imports it; no server depends on it.
 */
export { BENCH_FLAGS, runBench } from './run.js';
export type { BenchFleet, BenchHost } from './host.js';
