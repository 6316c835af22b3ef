/** @nemo-gym/bench: the benchmarks of `ng-bench` and their tooling, never a server's dependency. */
export { listenOnLoopback, loadReport, parseLoadArgs, percentile, runPostLoad, type LoadArgs, type LoadOptions, type LoadResult } from './load.js';
export { BENCH_FLAGS, runBench } from './run.js';
export type { BenchFleet, BenchHost } from './host.js';
