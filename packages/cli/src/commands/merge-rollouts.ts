/** ng-merge-rollouts: one output from the outputs of a sharded collection (+shard=i/N). */
import { UsageError } from '@nemo-gym/core/errors';
import { mergeRollouts } from '@nemo-gym/core/rollouts';
import type { CommandSpec } from '../runtime.js';

export const mergeRolloutsCommand: CommandSpec = {
  name: 'merge-rollouts',
  summary: 'Merge the outputs of sharded collections: each (task, repeat) once, failures of the missing ones, metrics recomputed',
  description:
    'Example: pnpm ng-merge-rollouts "+input_jsonl_fpaths=[results/out_0.jsonl,results/out_1.jsonl]" +output_jsonl_fpath=results/out.jsonl\n' +
    'Every input is checked before anything is written. The merged output and its sidecars are written atomically and the output is locked ' +
    'while it is written (<output>.lock): an interrupted merge leaves no output, so the same command can be run again. A torn line in an ' +
    'input (not a JSON object) is reported with its file and line, and its rollout is recorded as failed.',
  flags: [
    { name: 'input_jsonl_fpaths', type: 'list', description: 'the shard outputs, in order (the first copy of a (task, repeat) wins)', required: true },
    { name: 'output_jsonl_fpath', type: 'str', description: 'the merged output (must not exist, never an input); its _failures.jsonl and _metrics.json are written next to it', required: true },
  ],
  main: async (config) => {
    const inputs = config.input_jsonl_fpaths;
    if (!Array.isArray(inputs) || inputs.length === 0) throw new UsageError('+input_jsonl_fpaths must be a list of files, e.g. "+input_jsonl_fpaths=[out_0.jsonl,out_1.jsonl]".');
    const s = await mergeRollouts(inputs.map(String), String(config.output_jsonl_fpath), { lock: 'ng-merge-rollouts' });
    for (const t of s.torn.slice(0, 10)) {
      const which = t.taskIndex === null ? 'its rollout could not be identified' : `task ${t.taskIndex}, rollout ${t.rolloutIndex}`;
      process.stderr.write(`Line ${t.line} of ${t.path} is torn (${t.reason}); ${which}; recorded as failed in ${s.failuresPath}.\n`);
    }
    if (s.torn.length > 10) process.stderr.write(`… and ${s.torn.length - 10} more torn line(s), also recorded in ${s.failuresPath}.\n`);
    process.stdout.write(`\nMetrics:\n${JSON.stringify(s.metrics, null, 4)}\n\n`);
    process.stdout.write(
      `Merged ${inputs.length} file(s): ${s.written} rollout(s) to ${s.outputPath}` +
        (s.duplicates ? `, ${s.duplicates} repeated (task, repeat) pair(s) dropped` : '') +
        (s.untagged ? `, ${s.untagged} line(s) without _ng_task_index/_ng_rollout_index dropped` : '') +
        (s.torn.length ? `, ${s.torn.length} torn line(s) recorded as failures` : '') +
        `\nMetrics: ${s.metricsPath}\n`,
    );
    if (s.failed) process.stderr.write(`${s.failed} rollout(s) failed in every shard or were torn; reasons in ${s.failuresPath}.\n`);
    return s.failed ? 1 : 0;
  },
};
