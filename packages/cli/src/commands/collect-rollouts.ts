/**
 * ng-collect-rollouts: run every input row through an agent's /run and append the results to
 * a JSONL file, with bounded concurrency, failure records, resume and aggregate metrics.
 * The servers must already be running (ng-run); their addresses come from the head server.
 */
import { ServerClient } from '@nemo-gym/core/client';
import { isDict, type ConfigDict } from '@nemo-gym/core/config';
import { UsageError } from '@nemo-gym/core/errors';
import { collectRollouts, type Progress } from '@nemo-gym/core/rollouts';
import type { CommandSpec } from '../runtime.js';

function fmtDuration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const m = Math.floor(s / 60);
  const sec = Math.round(s % 60);
  return m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

export function progressLine(p: Progress): string {
  const finished = p.done + p.failed + p.skipped;
  const pct = p.total > 0 ? ((finished / p.total) * 100).toFixed(1) : '0.0';
  const eta = p.rate > 0 ? fmtDuration((p.total - finished) / p.rate) : '?';
  return `Collecting rollouts: ${finished}/${p.total} (${pct}%)  ${p.rate.toFixed(1)} rollouts/s  ETA ${eta}  in flight ${p.inFlight}  failures ${p.failed}`;
}

function intFlag(config: ConfigDict, name: string): number | null {
  const v = config[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new UsageError(`+${name} must be a whole number ≥ 0, got ${JSON.stringify(v)}.`);
  }
  return v;
}

export const collectRolloutsCommand: CommandSpec = {
  name: 'collect-rollouts',
  summary: 'Collect rollouts for a JSONL file of tasks through a running agent',
  description:
    'Example: pnpm ng-collect-rollouts +agent_name=simple_weather_simple_agent +input_jsonl_fpath=resources_servers/simple_weather/data/example.jsonl +output_jsonl_fpath=results/simple_weather.jsonl',
  flags: [
    { name: 'agent_name', type: 'str', description: 'agent instance for rows without their own agent_ref' },
    { name: 'input_jsonl_fpath', type: 'str', description: 'input rows (responses_create_params + task fields)', required: true },
    { name: 'output_jsonl_fpath', type: 'str', description: 'where results are appended', required: true },
    { name: 'limit', type: 'int', description: 'only the first N rows' },
    { name: 'num_repeats', type: 'int', description: 'rollouts per row (pass@k / mean@k are reported when > 1)' },
    { name: 'num_samples_in_parallel', type: 'int', description: 'rollouts in flight at once (default 256)' },
    { name: 'responses_create_params', type: 'dict', description: 'overrides for every row, e.g. +responses_create_params.temperature=0.6' },
    { name: 'restart', type: 'bool', description: 'delete earlier output and start over (needed when the input changed)' },
    { name: 'max_attempts', type: 'int', description: 'attempts per rollout while the agent provably did not receive it (refused, 429/503; default 3); a rollout that failed after it was sent is recorded and rerun by the next run' },
    { name: 'http_retry_max_attempts', type: 'int', description: 'HTTP attempts per request on connection errors and 408/429/502-504 (default 6)' },
  ],
  main: async (config) => {
    const head = isDict(config.head_server) ? (config.head_server as { host: string; port: number }) : { host: '127.0.0.1', port: 11000 };
    const concurrency = intFlag(config, 'num_samples_in_parallel') || 256;
    const overrides = config.responses_create_params;
    if (overrides !== undefined && overrides !== null && !isDict(overrides)) {
      throw new UsageError(`+responses_create_params must be a mapping of fields, e.g. +responses_create_params.temperature=0.6.`);
    }
    const retryAttempts = intFlag(config, 'http_retry_max_attempts');
    const client = await ServerClient.fromHeadServer(head, {
      connectionsPerHost: Math.min(concurrency, 4096),
      retry: { maxElapsedMs: 30_000, ...(retryAttempts ? { maxAttempts: retryAttempts } : {}) },
    });
    const tty = process.stderr.isTTY;
    let lastPlain = 0;
    const limit = intFlag(config, 'limit');
    if (limit) process.stdout.write(`Limiting the number of rows to ${limit}!\n`);
    process.stdout.write(`Querying with ${concurrency} concurrent requests\n`);
    if (overrides && Object.keys(overrides).length) process.stdout.write(`Overriding responses_create_params fields with ${JSON.stringify(overrides)}\n`);
    try {
      const summary = await collectRollouts({
        client,
        inputPath: String(config.input_jsonl_fpath),
        outputPath: String(config.output_jsonl_fpath),
        agentName: typeof config.agent_name === 'string' ? config.agent_name : undefined,
        limit,
        numRepeats: intFlag(config, 'num_repeats'),
        concurrency,
        overrides: (overrides as Record<string, unknown> | undefined) ?? {},
        restart: config.restart === true,
        maxAttempts: intFlag(config, 'max_attempts') ?? 3,
        log: (m) => process.stdout.write(`${m}\n`),
        onProgress: (p) => {
          if (tty) process.stderr.write(`\r\x1b[2K${progressLine(p)}`);
          else if (Date.now() - lastPlain > 10_000 || p.done + p.failed + p.skipped === p.total) {
            lastPlain = Date.now();
            process.stderr.write(`${progressLine(p)}\n`);
          }
        },
      });
      if (tty) process.stderr.write('\n');
      process.stdout.write(`\nMetrics:\n${JSON.stringify(summary.metrics, null, 4)}\n\n`);
      process.stdout.write(
        `Wrote ${summary.written} rollout(s) in ${summary.elapsedS.toFixed(1)} s to ${summary.outputPath}` +
          (summary.skipped ? ` (${summary.skipped} already there were skipped)` : '') +
          `\nMetrics: ${summary.metricsPath}\n`,
      );
      if (summary.failed > 0) {
        process.stderr.write(`${summary.failed} rollout(s) failed; reasons in ${summary.failuresPath}. Run the same command again to retry them.\n`);
      }
      if (summary.abortedBecause) process.stderr.write(`Stopped early: ${summary.abortedBecause}. Run the same command again to resume.\n`);
      return summary.failed > 0 || summary.abortedBecause ? 1 : 0;
    } finally {
      await client.close();
    }
  },
};
