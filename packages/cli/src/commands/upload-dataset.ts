/**
 * ng-upload-dataset: publish a dataset JSONL to a Hugging Face Hub dataset repo (created, private,
 * when absent), with the metrics document ng-prepare-data computes for it. Every row must pass
 * ng-prepare-data's checks; otherwise nothing is sent and the invalid lines are listed.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, extname, posix, resolve } from 'node:path';
import { type ConfigDict } from '@nemo-gym/core/config';
import { checkDatasetFile, formatBadRows, metricsJson, type DatasetSpec } from '@nemo-gym/core/data';
import { UsageError } from '@nemo-gym/core/errors';
import { DatasetRowsError } from '../errors.js';
import { datasetPageUrl, hubSettings } from '../hub/hub.js';
import { fmtBytes, transferDisplay } from '../progress.js';
import type { CommandSpec } from '../runtime.js';

const SPLITS = ['train', 'validation', 'example'] as const;

export interface UploadDatasetOptions {
  cwd?: string;
  out?: (line: string) => void;
  progressStream?: NodeJS.WriteStream;
}

function str(config: Record<string, unknown>, key: string): string | undefined {
  const v = config[key];
  return v === undefined || v === null || v === '' ? undefined : String(v);
}

function bool(config: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = config[key];
  if (v === undefined || v === null) return dflt;
  if (v === true || v === 'true' || v === 'True') return true;
  if (v === false || v === 'false' || v === 'False') return false;
  throw new UsageError(`+${key}=${String(v)} is not a boolean; use +${key}=true or +${key}=false.`);
}

/** `<stem>_metrics.json` beside a path in the repo. */
function metricsPathFor(pathInRepo: string): string {
  const ext = posix.extname(pathInRepo);
  return `${pathInRepo.slice(0, pathInRepo.length - ext.length)}_metrics.json`;
}

export async function uploadDatasetMain(config: Record<string, unknown>, opts: UploadDatasetOptions = {}): Promise<number> {
  const { uploadToHub } = await import('../hub/upload.js');
  const out = opts.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const cwd = opts.cwd ?? process.cwd();
  const jsonl = str(config, 'jsonl_fpath')!;
  const repoId = str(config, 'repo_id')!;
  if (!/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/.test(repoId)) {
    throw new UsageError(`+repo_id=${repoId} is not a Hub repo id; give <owner>/<name>, e.g. +repo_id=my-org/my-dataset.`);
  }
  const abs = resolve(cwd, jsonl);
  if (!existsSync(abs) || !statSync(abs).isFile()) throw new UsageError(`+jsonl_fpath=${jsonl}: no such file (resolved to ${abs}).`);
  const split = str(config, 'split') ?? 'train';
  if (!(SPLITS as readonly string[]).includes(split)) throw new UsageError(`+split=${split} is not one of ${SPLITS.join(', ')}.`);
  const pathInRepo = (str(config, 'path_in_repo') ?? basename(abs)).replace(/^\/+/, '');
  const settings = hubSettings(config);

  // The rows first: nothing leaves the machine unless all of them pass.
  const spec: DatasetSpec = {
    name: basename(abs, extname(abs)),
    type: split as DatasetSpec['type'],
    jsonl_fpath: jsonl,
    num_repeats: 1,
    gitlab_identifier: null,
    license: str(config, 'license') ?? null,
  };
  const check = await checkDatasetFile(spec, { cwd });
  if (check.badRows.length > 0) {
    throw new DatasetRowsError(
      `${jsonl}: ${check.badRows.length} invalid row(s), nothing was uploaded; fix them and run again:\n${formatBadRows(check.badRows)}`,
    );
  }
  if (check.validRows === 0) throw new DatasetRowsError(`${jsonl} has no rows; nothing was uploaded.`);
  const metricsInRepo = metricsPathFor(pathInRepo);
  out(`${jsonl}: ${check.validRows} valid row(s); publishing to ${repoId} as ${pathInRepo} and ${metricsInRepo}`);

  const display = transferDisplay(opts.progressStream ?? process.stderr, `Uploading ${pathInRepo}`);
  try {
    const res = await uploadToHub({
      repoId,
      settings,
      private: bool(config, 'private', true),
      commitTitle: str(config, 'commit_message') ?? `Upload ${pathInRepo} (${check.validRows} rows) and its metrics`,
      files: [
        { pathInRepo, content: { file: abs } },
        { pathInRepo: metricsInRepo, content: { text: metricsJson(check.metrics) } },
      ],
      onProgress: (done, total) => display.update(done, total),
    });
    display.stop();
    out(
      `${res.created ? 'created' : 'updated'} ${datasetPageUrl(settings.hubUrl, repoId)}: ${pathInRepo} (${fmtBytes(res.bytes)} with its metrics)` +
        `${res.commitOid ? `, commit ${res.commitOid.slice(0, 12)}` : ''}`,
    );
    out(`Download it with: huggingface_identifier: {repo_id: ${repoId}, artifact_fpath: ${pathInRepo}}`);
  } finally {
    display.stop();
  }
  return 0;
}

export const uploadDatasetCommand: CommandSpec = {
  name: 'upload-dataset',
  summary: 'Publish a validated dataset JSONL and its metrics to a Hugging Face Hub dataset repo.',
  description:
    'The rows are checked as ng-prepare-data checks them (any invalid row stops the upload, listed by line number); ' +
    'the repo is created (private) when absent; the JSONL and <stem>_metrics.json go in one commit. Needs hf_token ' +
    '(write access) in env.yaml.',
  flags: [
    { name: 'jsonl_fpath', type: 'str', description: 'the dataset file to publish', required: true },
    { name: 'repo_id', type: 'str', description: 'the Hub dataset repo, <owner>/<name>', required: true },
    { name: 'path_in_repo', type: 'str', description: 'its path in the repo (default: the file name)' },
    { name: 'split', type: 'train | validation | example', description: 'the dataset type written into the metrics (default train)' },
    { name: 'license', type: 'str', description: 'the license written into the metrics (default none)' },
    { name: 'private', type: 'bool', description: 'visibility of a repo this creates (default true)' },
    { name: 'commit_message', type: 'str', description: 'the commit title (default: names the file and row count)' },
    { name: 'hf_token', type: 'str', description: 'Hugging Face token with write access (better kept in env.yaml; default HF_TOKEN)' },
    { name: 'hf_endpoint', type: 'str', description: 'base URL of the Hub (default HF_ENDPOINT, else https://huggingface.co)' },
  ],
  main: (config: ConfigDict) => uploadDatasetMain(config),
};
