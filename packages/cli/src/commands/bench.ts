import { BENCH_FLAGS, runBench } from '@nemo-gym/bench';
import { serverNodeArgs, type CommandSpec } from '../runtime.js';
import { ServerFleet } from './run.js';

/** ng-bench: the sections live in @nemo-gym/bench; this command gives them ng-run's fleet and node flags. */
export const benchCommand: CommandSpec = {
  name: 'bench',
  summary: 'Measure rollout throughput, latency, CPU and memory against a bare node:http chain',
  pnpmScript: 'bench',
  flags: [...BENCH_FLAGS],
  main: async (config) => {
    await runBench(config, { fleet: (c) => new ServerFleet(c, { out: () => undefined }), nodeArgs: () => serverNodeArgs() });
    return 0;
  },
};
