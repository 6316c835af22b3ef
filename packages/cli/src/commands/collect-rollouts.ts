/**
 * ng-collect-rollouts: run every input row through an agent's /run and append the results to
 * a JSONL file, with bounded concurrency, failure records, resume and aggregate metrics.
 * The servers must already be running (ng-run); their addresses come from the head server.
 *
 * Before the first rollout: the files are checked, then the agent, the servers it uses and the
 * model backend (pre-flight); each problem is one line and exit code 2, with nothing written.
 * While it runs: a progress bar (plain lines when stderr is not a terminal), the first failure
 * of each reason at once, and an early stop after +max_consecutive_failures failures in a row.
 * Ctrl-C (or SIGTERM/SIGHUP) cancels what is in flight, says what was kept and how to resume,
 * and exits 128 + the signal number (130 for Ctrl-C).
 * One collector per output (local or through a queue): `<output>.lock` names the process writing
 * it; a second collector on the same output is refused, a lock left by a dead process is taken over.
 */
import { constants } from 'node:os';
import { ServerClient } from '@nemo-gym/core/client';
import { headServerOf, isDict, type ConfigDict } from '@nemo-gym/core/config';
import { NgError, UsageError } from '@nemo-gym/core/errors';
import { acquireOutputLock } from '@nemo-gym/core/files';
import { checkCollectPaths, collectionPaths, collectRollouts, DEFAULT_MAX_CONSECUTIVE_FAILURES, parseShard, type CollectSummary } from '@nemo-gym/core/rollouts';
import { onStopRequest, STOP_SIGNALS } from '../lifecycle.js';
import { progressDisplay, progressLine } from '../progress.js';
import { USAGE_EXIT_CODE, type CommandSpec } from '../runtime.js';
import { DISTRIBUTED_FLAGS, GROUP_FLAGS, groupOverridesOf, notStartedExit, queueCollectMain } from './collect-worker.js';

export { progressLine };

function intFlag(config: ConfigDict, name: string): number | null {
  const v = config[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new UsageError(`+${name} must be a whole number ≥ 0, got ${JSON.stringify(v)}.`);
  }
  return v;
}

const num = (x: unknown, digits = 3) => (typeof x === 'number' ? Number(x.toFixed(digits)).toLocaleString('en-US') : '–');

/** How many tasks the largest pass@k leaves out for having fewer scored rollouts, when any. */
function leftOut(m: Record<string, unknown>): string {
  const n = m['pass@k_tasks_left_out'];
  if (typeof n !== 'number' || n === 0) return '';
  const k = Math.max(...Object.keys(m).flatMap((key) => /^pass@(\d+)$/.exec(key)?.[1] ?? []).map(Number));
  return ` (pass@${k} leaves out ${n} task${n === 1 ? '' : 's'} with fewer scored rollouts)`;
}

/** The metrics as a short table (the full set is in `_metrics.json`). */
export function metricsTable(m: Record<string, any>, summary: Pick<CollectSummary, 'written' | 'failed' | 'skipped' | 'failuresByReason'>): string {
  const rows: [string, string][] = [];
  const masked = m.masked as { count: number; by_reason: Record<string, number> } | undefined;
  rows.push(['rollouts', `${(m.rows ?? 0) + (masked?.count ?? 0)} in the output (${summary.written} new, ${summary.skipped} from earlier runs), ${summary.failed} failed`]);
  if (masked) {
    const why = Object.entries(masked.by_reason).slice(0, 4).map(([r, n]) => `${r} ${n}`).join(', ');
    rows.push(['masked', `${masked.count} (in the output, flagged mask_sample; not in the means): ${why}`]);
  }
  const mean = (m.mean ?? {}) as Record<string, number>;
  const passK = Object.keys(m).filter((k) => /^(pass|mean)@\d+$/.test(k));
  rows.push(['reward', `mean ${num(mean.reward)}${passK.map((k) => `  ${k} ${num(m[k])}`).join('')}${leftOut(m)}`]);
  const components = Object.entries((m.reward_components ?? {}) as Record<string, Record<string, number>>);
  if (components.length) {
    const shown = components.slice(0, 6).map(([name, c]) => `${name} ${num(c.mean)}${Object.keys(c).filter((k) => /^pass@\d+$/.test(k)).map((k) => ` ${k} ${num(c[k])}`).join('')}`);
    rows.push(['components', `${shown.join('  ')}${components.length > 6 ? `  (+${components.length - 6} more)` : ''}`]);
  }
  // A field some rows lack is averaged over the rows that have it, and says how many those are.
  const fieldMeans = (means: Record<string, number>, present: Record<string, { mean: number; rows: number }> | undefined, of: number) =>
    Object.keys(means)
      .filter((k) => k !== 'reward')
      .slice(0, 6)
      .map((k) => (present?.[k] ? `${k} ${num(present[k].mean)} (${present[k].rows} of ${of} rows)` : `${k} ${num(means[k])}`))
      .join('  ');
  const others = fieldMeans(mean, m.mean_where_present, m.rows ?? 0);
  if (others) rows.push(['other means', others]);
  // A mixed-environment run: one line per agent.
  for (const [agent, a] of Object.entries((m.per_agent ?? {}) as Record<string, any>)) {
    const k = Object.keys(a).filter((key) => /^(pass|mean)@\d+$/.test(key));
    const fields = fieldMeans(a.mean ?? {}, a.mean_where_present, a.rows ?? 0);
    rows.push([`agent ${agent}`, `${a.rows} rollouts, reward mean ${num(a.mean?.reward)}${k.map((key) => `  ${key} ${num(a[key])}`).join('')}${leftOut(a)}${fields ? `  ${fields}` : ''}`]);
  }
  if (m.tasks) {
    const t = m.tasks;
    rows.push(['tasks', `${t.count}: always pass ${t.all_pass}, never ${t.none_pass}, sometimes ${t.some_pass}; mean pass rate ${num(t.pass_rate_mean)}, mean reward std ${num(t.reward_std_mean)}`]);
  }
  if (m.tokens) {
    const t = m.tokens;
    rows.push(['tokens', `input ${num(t.input_total, 0)} (${num(t.input_mean, 1)}/rollout)  output ${num(t.output_total, 0)} (${num(t.output_mean, 1)}/rollout)`]);
  }
  const lat = m.latency_s?.rollout;
  if (lat) rows.push(['latency (s)', `rollout p50 ${num(lat.p50)}  p90 ${num(lat.p90)}  p99 ${num(lat.p99)}  max ${num(lat.max)}  (this run, ${lat.count} rollouts)`]);
  const reasons = Object.entries(summary.failuresByReason ?? {});
  if (reasons.length) rows.push(['failures', reasons.map(([l, n]) => `${l} ${n}`).join(', ')]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n');
}

export const collectRolloutsCommand: CommandSpec = {
  name: 'collect-rollouts',
  summary: 'Collect rollouts for a JSONL file of tasks through a running agent',
  description:
    'Example: pnpm ng-collect-rollouts +agent_name=simple_weather_simple_agent +input_jsonl_fpath=resources_servers/simple_weather/data/example.jsonl +output_jsonl_fpath=results/simple_weather.jsonl',
  flags: [
    { name: 'agent_name', type: 'str', description: 'agent instance for rows without their own agent_ref' },
    { name: 'input_jsonl_fpath', type: 'str', description: 'input rows (responses_create_params + task fields)', required: true },
    { name: 'output_jsonl_fpath', type: 'str', description: 'where results are appended (one collector at a time: <output>.lock names the one writing it)', required: true },
    { name: 'limit', type: 'int', description: 'only the first N rows' },
    { name: 'num_repeats', type: 'int', description: 'rollouts per row (pass@k / mean@k are reported when > 1)' },
    { name: 'num_samples_in_parallel', type: 'int', description: 'rollouts in flight at once (default 256)' },
    { name: 'responses_create_params', type: 'dict', description: 'overrides for every row, e.g. +responses_create_params.temperature=0.6' },
    { name: 'restart', type: 'bool', description: 'delete earlier output and start over (needed when the input changed)' },
    { name: 'max_attempts', type: 'int', description: 'attempts per rollout while the agent provably did not receive it (refused, 429/503; default 3); a rollout that failed after it was sent is recorded and rerun by the next run' },
    { name: 'http_retry_max_attempts', type: 'int', description: 'HTTP attempts per request on connection errors and 408/429/502-504 (default 6)' },
    {
      name: 'max_consecutive_failures',
      type: 'int',
      description: `stop the run (cancelling what is in flight) after this many failures in a row, bad input rows aside; 0 never stops (default ${DEFAULT_MAX_CONSECUTIVE_FAILURES}); a rerun resumes`,
    },
    { name: 'preflight', type: 'bool', description: 'check the agent, its servers and the model backend (GET /v1/models) before the first rollout (default true)' },
    ...GROUP_FLAGS,
    ...DISTRIBUTED_FLAGS,
  ],
  main: async (config) => {
    // One writer per output, in both modes: the files are checked, then <output>.lock is taken.
    const output = String(config.output_jsonl_fpath);
    try {
      checkCollectPaths(String(config.input_jsonl_fpath), collectionPaths(output));
    } catch (err) {
      return notStartedExit(err);
    }
    const lock = acquireOutputLock(output, 'ng-collect-rollouts');
    try {
      if (config.queue_url !== undefined && config.queue_url !== null) return await queueCollectMain(config);
      return await localCollectMain(config);
    } finally {
      lock.release();
    }
  },
};

async function localCollectMain(config: ConfigDict): Promise<number> {
  const head = headServerOf(config);
  const concurrency = intFlag(config, 'num_samples_in_parallel') || 256;
  const overrides = config.responses_create_params;
  if (overrides !== undefined && overrides !== null && !isDict(overrides)) {
    throw new UsageError(`+responses_create_params must be a mapping of fields, e.g. +responses_create_params.temperature=0.6.`);
  }
  const retryAttempts = intFlag(config, 'http_retry_max_attempts');
  const limit = intFlag(config, 'limit');
  const numRepeats = intFlag(config, 'num_repeats');
  const maxAttempts = intFlag(config, 'max_attempts') ?? 3;
  const maxInARow = intFlag(config, 'max_consecutive_failures') ?? DEFAULT_MAX_CONSECUTIVE_FAILURES;
  const group = groupOverridesOf(config);
  const client = await ServerClient.fromHeadServer(head, {
    connectionsPerHost: Math.min(concurrency, 4096),
    retry: { maxElapsedMs: 30_000, ...(retryAttempts ? { maxAttempts: retryAttempts } : {}) },
  });

  // Stop requests: the first cancels the run (and the summary says what was kept); another quits at once.
  const stopper = new AbortController();
  let stopSignal: NodeJS.Signals | null = null;
  let requests = 0;
  const display = progressDisplay(process.stderr);
  const offStop = onStopRequest('ng-collect-rollouts', (why, signal) => {
    stopSignal ??= signal ?? 'SIGINT';
    display.note(`\n${why}: cancelling the rollouts in flight and saving what is done (press Ctrl-C again to quit at once)...`);
    stopper.abort();
  });
  const again = (sig: NodeJS.Signals) => () => {
    if (++requests > 1) process.exit(128 + (constants.signals[sig] ?? 2));
  };
  const forced = STOP_SIGNALS.map((s) => [s, again(s)] as const);
  for (const [s, h] of forced) process.on(s, h);

  try {
    const summary = await collectRollouts({
      client,
      inputPath: String(config.input_jsonl_fpath),
      outputPath: String(config.output_jsonl_fpath),
      agentName: typeof config.agent_name === 'string' ? config.agent_name : undefined,
      limit,
      numRepeats,
      concurrency,
      overrides: (overrides as Record<string, unknown> | undefined) ?? {},
      restart: config.restart === true,
      shard: parseShard(config.shard),
      maxAttempts,
      maxConsecutiveFailures: maxInARow,
      group,
      preflight: config.preflight !== false,
      signal: stopper.signal,
      log: (m) => display.note(m),
      onReady: ({ alreadyDone }) => {
        if (limit) process.stdout.write(`Limiting the number of rows to ${limit}!\n`);
        if (overrides && Object.keys(overrides).length) process.stdout.write(`Overriding responses_create_params fields with ${JSON.stringify(overrides)}\n`);
        process.stdout.write(`Querying with ${concurrency} concurrent requests${alreadyDone ? ` (${alreadyDone} rollout(s) already done are skipped)` : ''}\n`);
      },
      onFailure: (f) => {
        if (f.first) display.note(`First failure (${f.label}) on task ${f.taskIndex}, rollout ${f.rolloutIndex}: ${f.reason.length > 600 ? `${f.reason.slice(0, 600)}…` : f.reason}`);
      },
      progressIntervalMs: process.stderr.isTTY ? 200 : 1000,
      onProgress: (p) => display.update(p),
    });
    display.stop();
    process.stdout.write(`\nMetrics (${summary.metricsPath}):\n${metricsTable(summary.metrics, summary)}\n\n`);
    process.stdout.write(
      `Wrote ${summary.written} rollout(s) in ${summary.elapsedS.toFixed(1)} s to ${summary.outputPath}` +
        (summary.skipped ? ` (${summary.skipped} already there were skipped)` : '') +
        `\nMetrics: ${summary.metricsPath}\n`,
    );
    if (summary.failed > 0) {
      process.stderr.write(`${summary.failed} rollout(s) failed; reasons in ${summary.failuresPath}. Run the same command again to retry them.\n`);
    }
    const done = summary.written + summary.skipped;
    if (summary.interrupted) {
      process.stderr.write(
        `Interrupted: ${done} of ${summary.total} rollout(s) are in ${summary.outputPath} (${summary.written} from this run)` +
          `${summary.cancelled ? `; ${summary.cancelled} in flight were cancelled` : ''}. Run the same command again to resume; finished rollouts are not run again.\n`,
      );
      return 128 + (constants.signals[stopSignal ?? 'SIGINT'] ?? 2);
    }
    if (summary.abortedBecause) {
      process.stderr.write(
        `Stopped early: ${summary.abortedBecause}.\n${done} of ${summary.total} rollout(s) are in ${summary.outputPath}` +
          `${summary.cancelled ? `; ${summary.cancelled} in flight were cancelled` : ''}. Fix the cause, then run the same command again to resume.\n`,
      );
    }
    return summary.failed > 0 || summary.abortedBecause ? 1 : 0;
  } catch (err) {
    display.stop();
    if (stopper.signal.aborted) {
      process.stderr.write('Interrupted before the first rollout was sent; nothing was written.\n');
      return 128 + (constants.signals[stopSignal ?? 'SIGINT'] ?? 2);
    }
    return notStartedExit(err);
  } finally {
    offStop();
    for (const [s, h] of forced) process.off(s, h);
    await client.close();
  }
}

