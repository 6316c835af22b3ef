/**
 * ng-reverify: re-score a rollouts file through a resources server's /verify (no model calls),
 * write the re-scored rows and a summary of what changed.
 */
import { reverify, reverifyPaths, type ReverifySummary, type VerifyTarget } from '@nemo-gym/bridge';
import { headServerOf, type ConfigDict } from '@nemo-gym/core/config';
import { UsageError } from '@nemo-gym/core/errors';
import type { CommandSpec } from '../runtime.js';
import { numberFlag, reasonLines } from './export.js';

/** Where /verify is: +resources_server_url, or +resources_server (an instance under ng-run). */
export function verifyTarget(config: ConfigDict, command: string, required: boolean): VerifyTarget | undefined {
  const url = config.resources_server_url;
  const name = config.resources_server;
  if (url !== undefined && url !== null && name !== undefined && name !== null) {
    throw new UsageError(`ng-${command} takes +resources_server or +resources_server_url, not both.`);
  }
  if (typeof url === 'string' && url) {
    if (!/^https?:\/\//.test(url)) throw new UsageError(`+resources_server_url=${url} is not an http(s) URL, e.g. +resources_server_url=http://127.0.0.1:8000`);
    return { url };
  }
  if (typeof name === 'string' && name) {
    const head = headServerOf(config);
    return { serverName: name, head };
  }
  if (required) {
    throw new UsageError(
      `ng-${command} needs the resources server to verify with: +resources_server=<instance name> (servers started by ng-run) or +resources_server_url=http://127.0.0.1:<port>.`,
    );
  }
  return undefined;
}

export function reverifyLines(s: ReverifySummary): string[] {
  const mean = (x: number | null) => (x === null ? 'n/a' : x.toFixed(4));
  const lines = [
    `Re-verified ${s.verified} of ${s.rows} row(s) in ${s.elapsedS.toFixed(1)} s; wrote ${s.output}.`,
    `Rewards changed: ${s.changed}; unchanged: ${s.unchanged}${s.newlyScored ? `; scored for the first time: ${s.newlyScored}` : ''}.`,
    `Mean reward before ${mean(s.meanBefore)}, after ${mean(s.meanAfter)}; mean |change| ${s.meanAbsDelta.toFixed(4)}, largest ${s.maxAbsDelta.toFixed(4)}.`,
  ];
  const t = Object.entries(s.transitions).sort((a, b) => b[1] - a[1]);
  if (t.length) lines.push('Changes:', ...t.map(([k, n]) => `  ${k}: ${n}`));
  if (s.failed) lines.push(`${s.failed} row(s) failed to verify; reasons in ${s.failuresPath}. They are not in the output.`);
  if (Object.keys(s.unreadable).length) lines.push('Unreadable lines:', ...reasonLines(s.unreadable));
  return lines;
}

function intFlag(v: unknown, flag: string): number | undefined {
  const n = numberFlag(v, flag);
  if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new UsageError(`+${flag} must be a whole number >= 1, got ${n}.`);
  return n;
}

export const reverifyCommand: CommandSpec = {
  name: 'reverify',
  summary: "Recompute every rollout's reward through a resources server's /verify and report what changed",
  description:
    'Example: pnpm ng-reverify +input=results/rollouts.jsonl +output=results/rollouts_reverified.jsonl +resources_server=simple_weather\n' +
    'The summary (also written as <output>_summary.json) says how many rewards changed and by how much.\n' +
    'The input, the task file and the resources server are checked before anything is written. The output, <output>_failures.jsonl ' +
    '(only when rows failed; a run without failures removes an older one) and the summary are written atomically, and the output ' +
    'is locked while it is written (<output>.lock).',
  flags: [
    { name: 'input', type: 'str', description: 'rollouts JSONL to re-score', required: true },
    { name: 'output', type: 'str', description: 'where the re-scored rows go (JSONL)', required: true },
    { name: 'resources_server', type: 'str', description: 'instance name of a resources server running under ng-run (found through the head server)' },
    { name: 'resources_server_url', type: 'str', description: 'or its base URL, e.g. http://127.0.0.1:8000' },
    { name: 'tasks', type: 'str', description: 'the task rows the rollouts came from (the collector input); fills task fields the rollout rows lack' },
    { name: 'num_samples_in_parallel', type: 'int', description: '/verify requests in flight at once (default 32)' },
    { name: 'tolerance', type: 'float', description: 'rewards closer than this count as unchanged (default 1e-9)' },
    {
      name: 'judge_failed_only',
      type: 'bool',
      description: "score only the rollouts whose judge failed (recorded in the input's _failures.jsonl with their verify request); the input's rows are copied as they are",
    },
  ],
  main: async (config) => {
    const target = verifyTarget(config, 'reverify', true)!;
    const output = String(config.output);
    const s = await reverify({
      input: String(config.input),
      output,
      target,
      tasks: typeof config.tasks === 'string' ? config.tasks : undefined,
      concurrency: intFlag(config.num_samples_in_parallel, 'num_samples_in_parallel'),
      tolerance: numberFlag(config.tolerance, 'tolerance'),
      writeSummary: true,
      lock: 'ng-reverify',
      judgeFailedOnly: config.judge_failed_only === true,
    });
    const summaryPath = reverifyPaths(output).summary;
    process.stdout.write(`${reverifyLines(s).join('\n')}\nSummary: ${summaryPath}\n`);
    return s.failed || Object.keys(s.unreadable).length ? 1 : 0;
  },
};
