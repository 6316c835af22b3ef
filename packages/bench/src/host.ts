import type { ChildProcess } from 'node:child_process';
import type { ConfigDict } from '@nemo-gym/core/config';

/** The servers of one config as ng-run starts them, each a child process. */
export interface BenchFleet {
  readonly servers: readonly { readonly name: string; readonly url: string; readonly child: ChildProcess }[];
  start(): Promise<void>;
  waitReady(): Promise<void>;
  stop(): Promise<void>;
}

/** What the benchmarks take from the command that runs them (ng-bench), so this package does not depend on it. */
export interface BenchHost {
  /** The servers of a config, not started yet. */
  fleet(config: ConfigDict): BenchFleet;
  /** The node flags of every server process; the stub model and the bare chain run with them too. */
  nodeArgs(): string[];
}
