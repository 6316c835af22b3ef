/** The error codes packages/bridge owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const BRIDGE_ERRORS = registerErrorCodes('packages/bridge', {
  NG_ERR_EXPORT_NO_TOKEN_IDS: {
    message: '%s',
    meaning:
      '`ng-export +format=rl` found no rollout with token ids in its input: every row was collected from a model server that does not return them (an API model, or vllm_model without `return_token_id_information: true`). Nothing was written, rather than an empty file a trainer would read as a dataset.',
    fix: 'Collect the rollouts with a model server that records token ids (`responses_api_models/vllm_model/configs/vllm_model_for_training.yaml`), or export them as `+format=sft`.',
  },
});

/** An RL export whose input holds no rollout with token ids. */
export const NoTokenIdsExportError = createError(BRIDGE_ERRORS.NG_ERR_EXPORT_NO_TOKEN_IDS, 'NoTokenIdsExportError');
