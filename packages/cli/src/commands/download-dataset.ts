/**
 * ng-download-dataset: fetch the datasets the agent configs name from the Hugging Face Hub
 * (`huggingface_identifier: {repo_id, artifact_fpath}`) to their `jsonl_fpath`, then validate the
 * rows as ng-prepare-data does and print the counts. An entry without artifact_fpath is read by
 * split: the split's Parquet or JSON files in the repo become one JSONL (hub/split.ts). A dataset already present whose rows
 * validate is skipped; `+dataset=<name>` picks one dataset. The token of gated datasets comes from
 * `hf_token` in env.yaml (or HF_TOKEN); the Hub's address from `hf_endpoint` (or HF_ENDPOINT).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ConfigDict } from '@nemo-gym/core/config';
import { checkDatasetFile, findAgentDatasets, formatBadRows, PrepareDataError, type DatasetSpec } from '@nemo-gym/core/data';
import { NgError, UsageError } from '@nemo-gym/core/errors';
import { DatasetRowsError, HubUnreachableError } from '../errors.js';
import { datasetPageUrl, hubSettings, resolveUrl, type HubSettings } from '../hub/hub.js';
import { fmtBytes, transferDisplay } from '../progress.js';
import type { CommandSpec } from '../runtime.js';

export interface DownloadDatasetsOptions {
  /** Directory relative jsonl_fpath values resolve against (default: process.cwd()). */
  cwd?: string;
  out?: (line: string) => void;
  /** Where the progress bar or lines go (default: stderr). */
  progressStream?: NodeJS.WriteStream;
  /** Passed to the downloader (tests shorten the pauses). */
  backoffMs?: number;
  idleTimeoutMs?: number;
}

interface Item {
  agent: string;
  d: DatasetSpec;
}

function selectDatasets(config: Record<string, unknown>): Item[] {
  const { agents } = findAgentDatasets(config);
  const all = agents.flatMap((a) => a.datasets.map((d) => ({ agent: a.name, d })));
  if (all.length === 0) {
    throw new UsageError('the config names no datasets: give the agent configs with "+config_paths=[…]" (their `datasets:` entries say what to download).');
  }
  const wanted = config.dataset;
  if (wanted === undefined || wanted === null || wanted === '') return all;
  const picked = all.filter((x) => x.d.name === String(wanted));
  if (picked.length === 0) {
    const names = [...new Set(all.map((x) => x.d.name))].join(', ');
    throw new UsageError(`no dataset named ${JSON.stringify(String(wanted))} in the config; its datasets are: ${names}.`);
  }
  return picked;
}

/** Runs the command on a merged config; returns the exit code. */
export async function downloadDatasetsMain(config: Record<string, unknown>, opts: DownloadDatasetsOptions = {}): Promise<number> {
  const { downloadHubFile } = await import('../hub/download.js');
  const out = opts.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const cwd = opts.cwd ?? process.cwd();
  const items = selectDatasets(config);
  const settings: HubSettings = hubSettings(config);
  const failures: NgError[] = [];
  let downloaded = 0;
  let skipped = 0;
  let unreachable = false;
  const reportRows = async (d: DatasetSpec, label: string): Promise<void> => {
    const check = await checkDatasetFile(d, { cwd });
    out(`${label}: ${check.validRows} valid row(s)${d.num_repeats > 1 ? ` (counting ${d.num_repeats} repeats)` : ''}, ${check.badRows.length} invalid`);
    if (check.badRows.length > 0) {
      out(`WARNING: ${check.badRows.length} invalid row(s) in ${d.jsonl_fpath}; ng-prepare-data leaves them out of the metrics:\n${formatBadRows(check.badRows)}`);
    }
  };

  /** A progress line for one file's download. */
  const transfer = (path: string) => {
    const display = transferDisplay(opts.progressStream ?? process.stderr, `Downloading ${path}`);
    return { onProgress: (done: number, total: number) => display.update(done, total), note: (line: string) => display.note(line), stop: () => display.stop() };
  };

  for (const { agent, d } of items) {
    const label = `${agent}/${d.name} (${d.type})`;
    const target = resolve(cwd, d.jsonl_fpath);
    if (existsSync(target)) {
      const check = await checkDatasetFile(d, { cwd });
      if (check.badRows.length === 0) {
        out(`${label}: ${d.jsonl_fpath} is already present and valid (${check.validRows} rows); skipped`);
        skipped++;
        continue;
      }
      if (!d.huggingface_identifier) {
        out(`${label}: ${d.jsonl_fpath} is present with ${check.badRows.length} invalid row(s) and there is no Hub copy to fetch:\n${formatBadRows(check.badRows)}`);
        failures.push(new DatasetRowsError(`${label}: ${d.jsonl_fpath} has ${check.badRows.length} invalid row(s) (listed above); fix them.`));
        continue;
      }
      out(`${label}: ${d.jsonl_fpath} is present but has ${check.badRows.length} invalid row(s); fetching the Hub's copy`);
    }
    const hf = d.huggingface_identifier;
    if (!hf) {
      failures.push(new PrepareDataError('NG_ERR_PREPARE_MISSING_DATASETS', `${label}: ${d.jsonl_fpath} is missing and the dataset has no huggingface_identifier to download it from; place the file there.`));
      continue;
    }
    if (unreachable) {
      const how = hf.artifact_fpath
        ? `fetch ${resolveUrl(settings.hubUrl, hf.repo_id, hf.artifact_fpath)} and save it as ${target}`
        : `save the ${d.type} split of ${datasetPageUrl(settings.hubUrl, hf.repo_id)} as JSONL at ${target}`;
      failures.push(new HubUnreachableError(`the Hugging Face Hub at ${settings.hubUrl} is unreachable: ${how}`));
      continue;
    }
    const from = { repoId: hf.repo_id, target, settings, backoffMs: opts.backoffMs, idleTimeoutMs: opts.idleTimeoutMs };
    try {
      if (hf.artifact_fpath) {
        const show = transfer(hf.artifact_fpath);
        let got: Awaited<ReturnType<typeof downloadHubFile>>;
        try {
          got = await downloadHubFile({ ...from, path: hf.artifact_fpath, onProgress: show.onProgress, note: show.note });
        } finally {
          show.stop();
        }
        const resumed = got.resumedFrom > 0 ? `, continued from ${fmtBytes(got.resumedFrom)} already in ${d.jsonl_fpath}.part` : '';
        const cuts = got.resumes > 0 ? `, ${got.resumes} broken connection(s) continued with a Range request` : '';
        out(`${label}: downloaded ${hf.repo_id}/${hf.artifact_fpath} to ${d.jsonl_fpath} (${fmtBytes(got.size)}, ${got.checkedBy} checked${resumed}${cuts})`);
      } else {
        // Read by split upstream: the split's data files (Parquet or JSON) become one JSONL.
        const { downloadSplit } = await import('../hub/split.js');
        const got = await downloadSplit({ ...from, split: d.type, onFile: transfer });
        const bytes = got.downloads.reduce((n, x) => n + x.size, 0);
        out(`${label}: converted the ${d.type} split of ${hf.repo_id} (${got.files.join(', ')}; ${fmtBytes(bytes)}) to ${d.jsonl_fpath}: ${got.rows} row(s)`);
      }
      downloaded++;
    } catch (err) {
      if (!(err instanceof NgError)) throw err;
      if (err instanceof HubUnreachableError) unreachable = true;
      failures.push(err);
      continue;
    }
    await reportRows(d, label);
  }
  out(`Datasets: ${downloaded} downloaded, ${skipped} already present, ${failures.length} failed`);
  for (const f of failures) process.stderr.write(`ng-download-dataset: ${f.message}\n`);
  return failures.length > 0 ? 1 : 0;
}

export const downloadDatasetCommand: CommandSpec = {
  name: 'download-dataset',
  summary: 'Download the datasets the agent configs name from the Hugging Face Hub to their jsonl_fpath, and validate them.',
  description:
    'Each dataset entry with huggingface_identifier: {repo_id, artifact_fpath} is fetched to its jsonl_fpath (resumable: ' +
    'a cut download continues from <jsonl_fpath>.part), checked against the size and SHA-256 the Hub publishes, and its ' +
    'rows validated as ng-prepare-data does. Without artifact_fpath, the split named by the entry\'s type is read from ' +
    'the repo\'s Parquet or JSON data files and written as JSONL. A file already present whose rows validate is skipped. Gated datasets need ' +
    'hf_token in env.yaml.',
  flags: [
    { name: 'dataset', type: 'str', description: 'only the dataset of this name (default: every dataset of every agent in the config)' },
    { name: 'hf_token', type: 'str', description: 'Hugging Face token for gated or private datasets (better kept in env.yaml; default HF_TOKEN)' },
    { name: 'hf_endpoint', type: 'str', description: 'base URL of the Hub (default HF_ENDPOINT, else https://huggingface.co)' },
  ],
  // Model configs interpolate ${policy_*}; downloading needs no model, so empty values suffice,
  // and an environment's config alone is enough (its agent may name a model server not given).
  initial: { policy_base_url: '', policy_api_key: '', policy_model_name: '' },
  partialConfig: true,
  main: (config: ConfigDict) => downloadDatasetsMain(config),
};
