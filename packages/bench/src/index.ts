/** @nemo-gym/bench: benchmark tooling, installed as a development dependency only. */
export { listenOnLoopback, loadReport, parseLoadArgs, percentile, runPostLoad, type LoadArgs, type LoadOptions, type LoadResult } from './load.js';
