/**
 * ng-prepare-data: validate the datasets named in agent configs, write their metrics and the
 * collated training files. Flags: +output_dirpath, +mode (train_preparation | example_validation),
 * +should_download, plus "+config_paths=[...]" naming the agent configs.
 */
import { type ConfigDict } from '@nemo-gym/core/config';
import { prepareData, type PrepareMode } from '@nemo-gym/core/data';
import { UsageError } from '@nemo-gym/core/errors';
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
  await prepareData(config, flags);
  return 0;
}

export const prepareDataCommand: CommandSpec = {
  name: 'prepare-data',
  summary: 'Validate datasets named in agent configs, write their metrics and collate them for training.',
  flags: [
    { name: 'output_dirpath', type: 'str', description: 'folder for the collated <type>.jsonl and <type>_metrics.json', required: true },
    { name: 'mode', type: 'train_preparation | example_validation', description: 'which dataset types to process', required: true },
    { name: 'should_download', type: 'bool', description: 'download missing train/validation datasets (default false)' },
  ],
  // Model configs interpolate ${policy_*}; data preparation needs no model, so empty values suffice.
  initial: { policy_base_url: '', policy_api_key: '', policy_model_name: '' },
  main: (config: ConfigDict) => prepareDataMain(config),
};
