/**
 * Distributed collection on Redis.
 *
 * - `ng-collect-rollouts +queue_url=redis://…`: enqueues the rollouts and writes what the
 *   workers finish (queueCollect below; the local options otherwise apply unchanged).
 * - `ng-collect-worker +queue_url=redis://…`: runs jobs from the queue against the agents of
 *   the ng-run its head server belongs to, until stopped (or idle for +idle_exit_s).
 */
import { constants } from 'node:os';
import { ServerClient } from '@nemo-gym/core/client';
import { headServerOf, isDict, type ConfigDict } from '@nemo-gym/core/config';
import { NgError, UsageError } from '@nemo-gym/core/errors';
import { checkGroupOverrides, parseShard, type CollectSummary, type GroupOverrides, type Progress } from '@nemo-gym/core/rollouts';
import { collectViaQueue, parseQueueUrl, runWorker } from '@nemo-gym/queue';
import { onStopRequest, STOP_SIGNALS } from '../lifecycle.js';
import { exitCodeOf, USAGE_EXIT_CODE, type CommandSpec, type FlagSpec } from '../runtime.js';

export const DISTRIBUTED_FLAGS: FlagSpec[] = [
  { name: 'queue_url', type: 'str', description: 'collect through a Redis queue (redis://host:port): enqueue the rollouts and write what ng-collect-worker processes finish' },
  { name: 'queue_name', type: 'str', description: 'queue the jobs go to (default rollouts); workers serve one queue' },
  { name: 'worker_wait_s', type: 'float', description: 'with +queue_url: fail when no result came and no worker held a job of the queue for this long (default 600); the jobs stay enqueued for the rerun' },
  { name: 'shard', type: 'str', description: 'only the tasks whose line index is i modulo N (+shard=i/N), one output file per shard; merge them with ng-merge-rollouts' },
];

/** Overrides of the group settings of resources servers that score groups (docs/group-rewards.md). */
export const GROUP_FLAGS: FlagSpec[] = [
  { name: 'group_wait_timeout_s', type: 'float', description: "for a resources server with verify_group: longest wait from a group's first finished rollout to scoring it (default: the server's group_wait_timeout_s, else 600)" },
  { name: 'group_member_failure', type: 'str', description: "for a resources server with verify_group: score_rest (score a group on the rollouts that finished) or fail_group (record the whole group as failed); default: the server's setting, else score_rest" },
];

/** The group flags of a collect command, checked. */
export function groupOverridesOf(config: ConfigDict): GroupOverrides {
  const wait = config.group_wait_timeout_s;
  const failure = config.group_member_failure;
  const overrides: GroupOverrides = {
    waitTimeoutS: wait === undefined || wait === null ? null : (wait as number),
    memberFailure: failure === undefined || failure === null ? null : String(failure),
  };
  checkGroupOverrides(overrides);
  return overrides;
}

function num(config: ConfigDict, name: string): number | null {
  const v = config[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new UsageError(`+${name} must be a number ≥ 0, got ${JSON.stringify(v)}.`);
  return v;
}

/** +queue_url, checked before anything connects; a malformed one is named (credentials masked). */
function queueUrl(config: ConfigDict): string {
  const url = config.queue_url;
  if (typeof url !== 'string') throw new UsageError(`+queue_url must be a Redis URL such as redis://127.0.0.1:6379, got ${JSON.stringify(url)}.`);
  try {
    parseQueueUrl(url);
  } catch (err) {
    throw new UsageError(`+${(err as Error).message}`);
  }
  return url;
}

function progressText(p: Progress): string {
  const finished = p.done + p.failed + p.skipped;
  return `Collecting rollouts through the queue: ${finished}/${p.total} (${p.total ? ((finished / p.total) * 100).toFixed(1) : '0.0'}%)  ${p.rate.toFixed(1)} rollouts/s  waiting for ${p.inFlight}  failures ${p.failed}`;
}

/** What was kept and how to resume, when a queue collection is stopped. */
function interruptedText(summary: CollectSummary, queue: string): string {
  const done = summary.written + summary.skipped;
  const pending = summary.pending ?? 0;
  return (
    `Interrupted: ${done} of ${summary.total} rollout(s) are in ${summary.outputPath} (${summary.written} from this run)` +
    `${pending ? `; ${pending} enqueued without a result yet stay in queue ${queue}, and workers keep running them` : ''}.` +
    ` Run the same command again to resume: it writes what the workers finished meanwhile and enqueues nothing twice.\n`
  );
}

/** ng-collect-rollouts with +queue_url: pre-flight, enqueue, write what the workers finish, report as a local collection does. */
export async function queueCollectMain(config: ConfigDict): Promise<number> {
  const url = queueUrl(config);
  const overrides = config.responses_create_params;
  if (overrides !== undefined && overrides !== null && !isDict(overrides)) throw new UsageError(`+responses_create_params must be a mapping of fields, e.g. +responses_create_params.temperature=0.6.`);
  const queue = typeof config.queue_name === 'string' ? config.queue_name : 'rollouts';
  const tty = process.stderr.isTTY;
  let lastPlain = 0;
  // The pre-flight of a local collection, through the head server the workers use.
  const checks = config.preflight !== false;
  let client: ServerClient | undefined;
  const group = groupOverridesOf(config);
  if (!checks) {
    // Without the checks the head server is still asked (quietly) which servers score groups.
    client = await ServerClient.fromHeadServer(headServerOf(config), { retry: { maxElapsedMs: 5_000 } }).catch(() => {
      process.stderr.write('ng-collect-rollouts: no head server answered, so no resources server is known to score groups (/verify_group): every rollout is written with its own /verify reward.\n');
      return undefined;
    });
  } else {
    const head = headServerOf(config);
    try {
      client = await ServerClient.fromHeadServer(head, { retry: { maxElapsedMs: 30_000 } });
    } catch (err) {
      if (err instanceof NgError && err.code === 'NG_ERR_HEAD_SERVER') {
        process.stderr.write(`ng-collect-rollouts: ${err.message} The head server is needed for the checks before the first rollout; where the collector runs without one, give +preflight=false.\n`);
        return 1;
      }
      throw err;
    }
  }
  // Stop requests: the first stops enqueuing and writing (the queue keeps the jobs); another quits at once.
  const stopper = new AbortController();
  let stopSignal: NodeJS.Signals | null = null;
  let requests = 0;
  const offStop = onStopRequest('ng-collect-rollouts', (why, signal) => {
    stopSignal ??= signal ?? 'SIGINT';
    process.stderr.write(`${tty ? '\n' : ''}${why}: stopping; what is written stays, and the jobs already enqueued stay in the queue (press Ctrl-C again to quit at once)...\n`);
    stopper.abort();
  });
  const again = (sig: NodeJS.Signals) => () => {
    if (++requests > 1) process.exit(128 + (constants.signals[sig] ?? 2));
  };
  const forced = STOP_SIGNALS.map((s) => [s, again(s)] as const);
  for (const [s, h] of forced) process.on(s, h);
  const exitCode = () => 128 + (constants.signals[stopSignal ?? 'SIGINT'] ?? 2);
  try {
    const summary = await collectViaQueue({
      queueUrl: url,
      queue,
      inputPath: String(config.input_jsonl_fpath),
      outputPath: String(config.output_jsonl_fpath),
      agentName: typeof config.agent_name === 'string' ? config.agent_name : undefined,
      limit: num(config, 'limit'),
      numRepeats: num(config, 'num_repeats'),
      overrides: (overrides as Record<string, unknown> | undefined) ?? {},
      restart: config.restart === true,
      shard: parseShard(config.shard),
      client,
      preflight: checks,
      group,
      ...(num(config, 'worker_wait_s') !== null ? { workerWaitMs: num(config, 'worker_wait_s')! * 1000 } : {}),
      signal: stopper.signal,
      log: (m) => process.stdout.write(`${m}\n`),
      onProgress: (p) => {
        if (tty) process.stderr.write(`\r\x1b[2K${progressText(p)}`);
        else if (Date.now() - lastPlain > 10_000 || p.done + p.failed + p.skipped === p.total) {
          lastPlain = Date.now();
          process.stderr.write(`${progressText(p)}\n`);
        }
      },
    });
    if (tty) process.stderr.write('\n');
    process.stdout.write(`\nMetrics:\n${JSON.stringify(summary.metrics, null, 4)}\n\n`);
    process.stdout.write(`Wrote ${summary.written} rollout(s) in ${summary.elapsedS.toFixed(1)} s to ${summary.outputPath}${summary.skipped ? ` (${summary.skipped} already there were skipped)` : ''}\nMetrics: ${summary.metricsPath}\n`);
    if (summary.failed > 0) process.stderr.write(`${summary.failed} rollout(s) failed; reasons in ${summary.failuresPath}. Run the same command again to retry them.\n`);
    if (summary.interrupted) {
      process.stderr.write(interruptedText(summary, queue));
      return exitCode();
    }
    return summary.failed > 0 ? 1 : 0;
  } catch (err) {
    if (tty) process.stderr.write('\n');
    if (stopper.signal.aborted && err instanceof NgError && err.code === 'NG_ERR_USAGE') {
      process.stderr.write('Interrupted before the first job was enqueued; nothing was written.\n');
      return exitCode();
    }
    return notStartedExit(err);
  } finally {
    offStop();
    for (const [s, h] of forced) process.off(s, h);
    await client?.close();
  }
}

export const collectWorkerCommand: CommandSpec = {
  name: 'collect-worker',
  summary: 'Run rollout jobs from a Redis queue against the agents of a running ng-run',
  description:
    'Start ng-run on this host first (or point +head_server at one), then: pnpm ng-collect-worker +queue_url=redis://10.0.0.1:6379 +num_samples_in_parallel=256. Results go back to the ng-collect-rollouts that enqueued them.',
  flags: [
    { name: 'queue_url', type: 'str', description: 'the Redis server holding the queue, e.g. redis://10.0.0.1:6379', required: true },
    { name: 'queue_name', type: 'str', description: 'queue to serve (default rollouts)' },
    { name: 'num_samples_in_parallel', type: 'int', description: 'rollouts this worker runs at once (default 256)' },
    { name: 'prefetch', type: 'int', description: 'jobs taken ahead of a free slot, so a finished rollout is replaced at once (default: num_samples_in_parallel, and more while rollouts finish faster than Redis answers; 0 takes only for free slots; they go back to the queue when the worker stops)' },
    { name: 'lease_s', type: 'float', description: 'a job untouched this long (its worker died) is run again elsewhere (default 60)' },
    { name: 'idle_exit_s', type: 'float', description: 'exit when no job was left or pending for this long (default: run until stopped)' },
    { name: 'max_attempts', type: 'int', description: 'attempts per rollout while the agent provably did not receive it (default 3)' },
  ],
  main: async (config) => {
    const url = queueUrl(config);
    const head = headServerOf(config);
    const concurrency = num(config, 'num_samples_in_parallel') || 256;
    const client = await ServerClient.fromHeadServer(head, { connectionsPerHost: Math.min(concurrency, 4096), retry: { maxElapsedMs: 30_000 } });
    const stop = new AbortController();
    const off = onStopRequest('ng-collect-worker', (why) => {
      process.stderr.write(`${why}: finishing the running rollouts, taking no new ones...\n`);
      stop.abort();
    });
    try {
      const idle = num(config, 'idle_exit_s');
      const s = await runWorker({
        client,
        queueUrl: url,
        queue: typeof config.queue_name === 'string' ? config.queue_name : undefined,
        concurrency,
        prefetch: num(config, 'prefetch') ?? undefined,
        leaseMs: (num(config, 'lease_s') ?? 60) * 1000,
        idleExitMs: idle === null ? null : idle * 1000,
        maxAttempts: num(config, 'max_attempts') ?? 3,
        signal: stop.signal,
        log: (m) => process.stdout.write(`${m}\n`),
      });
      process.stdout.write(`Worker finished: ${s.done} rollout(s) done, ${s.failed} failed${s.lost ? `, ${s.lost} not handed back (redone after their lease)` : ''}.\n`);
      return 0;
    } finally {
      off();
      await client.close();
    }
  },
};

/**
 * A collection that stopped on a pre-flight or file problem never ran (or stopped on a file
 * error): one message and the usage exit code, for the local and the queue collector alike.
 * Anything else is rethrown.
 */
export function notStartedExit(err: unknown): number {
  if (err instanceof NgError && exitCodeOf(err) === USAGE_EXIT_CODE) {
    process.stderr.write(`ng-collect-rollouts: ${err.message}\n`);
    return USAGE_EXIT_CODE;
  }
  throw err;
}
