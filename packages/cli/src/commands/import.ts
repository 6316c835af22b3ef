/**
 * ng-import: trajectories from other agent frameworks (OpenAI chat logs, LangChain message dicts,
 * NeMo Agent Toolkit intermediate steps) -> rollout rows, optionally re-scored through /verify.
 */
import { IMPORT_FORMATS, importFile, type ImportFormat } from '@nemo-gym/bridge';
import { UsageError } from '@nemo-gym/core/errors';
import type { CommandSpec } from '../runtime.js';
import { reasonLines } from './export.js';
import { reverifyLines, verifyTarget } from './reverify.js';

export const importCommand: CommandSpec = {
  name: 'import',
  summary: "Turn another framework's trajectories (OpenAI chat, LangChain, NeMo Agent Toolkit) into rollout rows",
  description:
    'Example: pnpm ng-import +input=chats.jsonl +output=results/imported.jsonl +format=openai_chat +resources_server=simple_weather\n' +
    'docs/06-training-data.md describes each input format.\n' +
    'The input and the resources server are checked before the output is touched; the output is written atomically ' +
    '(an interrupted import leaves it as it was) and is locked while it is written (<output>.lock).',
  flags: [
    { name: 'input', type: 'str', description: 'one trajectory per line', required: true },
    { name: 'output', type: 'str', description: 'rollout rows (JSONL); replaced atomically, never the input', required: true },
    { name: 'format', type: IMPORT_FORMATS.join(' | '), description: 'what each input line is', required: true },
    { name: 'resources_server', type: 'str', description: 're-score through this resources server (instance name under ng-run)' },
    { name: 'resources_server_url', type: 'str', description: 'or through the server at this base URL' },
    { name: 'num_samples_in_parallel', type: 'int', description: '/verify requests in flight at once when re-scoring (default 32)' },
  ],
  main: async (config) => {
    const format = config.format;
    if (typeof format !== 'string' || !IMPORT_FORMATS.includes(format as ImportFormat)) {
      throw new UsageError(`+format=${String(format)} is not one of ${IMPORT_FORMATS.join(', ')}.`);
    }
    const s = await importFile({
      input: String(config.input),
      output: String(config.output),
      format: format as ImportFormat,
      rescore: verifyTarget(config, 'import', false),
      concurrency: typeof config.num_samples_in_parallel === 'number' ? config.num_samples_in_parallel : undefined,
      lock: 'ng-import',
    });
    const unusable = Object.values(s.unusable).reduce((n, v) => n + v.count, 0);
    const lines = [`Imported ${s.imported} of ${s.lines} ${format} trajectories into ${s.output}.`];
    if (unusable) lines.push('Could not import:', ...reasonLines(s.unusable));
    if (s.rescored) lines.push(...reverifyLines(s.rescored));
    process.stdout.write(`${lines.join('\n')}\n`);
    return unusable || (s.rescored && s.rescored.failed) ? 1 : 0;
  },
};
