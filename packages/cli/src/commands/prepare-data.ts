/**
 * ng-prepare-data: validate the datasets named in agent configs, write their metrics and the
 * collated training files. Flags: +output_dirpath, +mode (train_preparation | example_validation),
 * +should_download, plus "+config_paths=[...]" naming the agent configs.
 */
import { type ConfigDict } from '@nemo-gym/core/config';
import { prepareData, type PrepareMode } from '@nemo-gym/core/data';
import { UsageError } from '@nemo-gym/core/errors';
import { HubError } from '../errors.js';
import { hubSettings } from '../hub/hub.js';
import { agentRowChecks } from '../row-checks.js';
import type { CommandSpec } from '../runtime.js';

const MODES: PrepareMode[] = ['train_preparation', 'example_validation'];

function asBool(v: unknown, flag: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'True' || v === 1) return true;
  if (v === 'false' || v === 'False' || v === 0) return false;
  throw new UsageError(`+${flag}=${String(v)} is not a boolean; use +${flag}=true or +${flag}=false.`);
}

export interface PrepareDataFlags {
  output_dirpath: string;
  mode: PrepareMode;
  should_download: boolean;
}

export function prepareDataFlags(config: Record<string, unknown>): PrepareDataFlags {
  const out = config.output_dirpath;
  if (typeof out !== 'string' || out === '') {
    throw new UsageError('ng-prepare-data needs +output_dirpath=<folder>: where the collated <type>.jsonl and <type>_metrics.json files go.');
  }
  const mode = config.mode;
  if (typeof mode !== 'string' || !MODES.includes(mode as PrepareMode)) {
    throw new UsageError(
      `ng-prepare-data needs +mode=train_preparation or +mode=example_validation${mode === undefined ? '' : ` (got ${JSON.stringify(mode)})`}.`,
    );
  }
  return { output_dirpath: out, mode: mode as PrepareMode, should_download: asBool(config.should_download, 'should_download') };
}

/** Run data preparation on a merged config; returns the exit code (errors propagate as NgError). */
export async function prepareDataMain(config: Record<string, unknown>): Promise<number> {
  const flags = prepareDataFlags(config);
  await prepareData(config, {
    ...flags,
    // Rows are checked against their resources server's verify request and tools.
    rowChecks: (agent) => agentRowChecks(config, agent),
    // Missing datasets come from the Hugging Face Hub, as ng-download-dataset fetches them.
    download: async (d, absPath) => {
      const hf = d.huggingface_identifier;
      if (!hf) {
        throw new HubError(`dataset \`${d.name}\` has no huggingface_identifier to download; place the file at ${d.jsonl_fpath}.`);
      }
      if (!hf.artifact_fpath) {
        // Read by split, as ng-download-dataset does.
        const { downloadSplit } = await import('../hub/split.js');
        await downloadSplit({ repoId: hf.repo_id, split: d.type, target: absPath, settings: hubSettings(config) });
        return;
      }
      const { downloadHubFile } = await import('../hub/download.js');
      await downloadHubFile({ repoId: hf.repo_id, path: hf.artifact_fpath, target: absPath, settings: hubSettings(config) });
    },
  });
  return 0;
}

export const prepareDataCommand: CommandSpec = {
  name: 'prepare-data',
  summary: 'Validate datasets named in agent configs, write their metrics and collate them for training.',
  flags: [
    { name: 'output_dirpath', type: 'str', description: 'folder for the collated <type>.jsonl and <type>_metrics.json', required: true },
    { name: 'mode', type: 'train_preparation | example_validation', description: 'which dataset types to process', required: true },
    { name: 'should_download', type: 'bool', description: 'download missing train/validation datasets from the Hugging Face Hub (default false)' },
    { name: 'hf_token', type: 'str', description: 'Hugging Face token for gated datasets (better kept in env.yaml; default HF_TOKEN)' },
    { name: 'hf_endpoint', type: 'str', description: 'base URL of the Hub (default HF_ENDPOINT, else https://huggingface.co)' },
  ],
  // Model configs interpolate ${policy_*}; data preparation needs no model, so empty values suffice.
  initial: { policy_base_url: '', policy_api_key: '', policy_model_name: '' },
  main: (config: ConfigDict) => prepareDataMain(config),
};
