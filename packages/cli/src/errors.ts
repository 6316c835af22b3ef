/** The error codes and classes of the command-line package, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const CLI_ERRORS = registerErrorCodes('packages/cli', {
  NG_ERR_DATA_VALIDATION: {
    message: '%s',
    meaning:
      '`ng-test` found a server\'s example data or its metrics not as required (five example rows, a metrics file that matches them).',
    fix: 'Regenerate with `ng-prepare-data +mode=example_validation` and check `data/example.jsonl`.',
  },
  NG_ERR_HUB: {
    message: '%s',
    meaning:
      '`ng-download-dataset` or `ng-upload-dataset`: the Hugging Face Hub answered with an error other than a refused authorization — the repo or the file does not exist (a private repo looks the same to a reader without access), a dataset entry without `artifact_fpath` names a repo with no data file for its split (the message lists the repo\'s files), or the Hub failed (HTTP 5xx). The message names the repo, the file and the Hub\'s answer.',
    fix: 'Check `huggingface_identifier.repo_id` and `artifact_fpath` against the repo\'s "Files" page; for a server error, run the command again later (a partial download is continued).',
  },
  NG_ERR_HUB_AUTH: {
    message: '%s',
    meaning:
      'The Hub refused the request: the dataset is gated or private and no token was given (HTTP 401), or the token\'s account has no access to it or may not write to it (HTTP 403). The message names the repo; the token itself is never printed.',
    fix: 'Put a token in `env.yaml` as `hf_token: hf_…` (created at huggingface.co/settings/tokens; read access to download, write access to upload), or export `HF_TOKEN`. For a gated dataset, accept its conditions on the dataset\'s page with the token\'s account.',
  },
  NG_ERR_HUB_UNREACHABLE: {
    message: '%s',
    meaning:
      'The Hub could not be reached (no network, DNS failure, refused connection, or no answer within the time limit). The message says which URL to fetch and where to save the file.',
    fix: 'Fetch the file from the URL in the message on a machine that has access and copy it to the path given, then run the command again (a file already in place whose rows validate is kept); or point `hf_endpoint` (or `HF_ENDPOINT`) at a reachable mirror.',
  },
  NG_ERR_DATASET_ROWS: {
    message: '%s',
    meaning:
      '`ng-upload-dataset` refused a dataset: some rows fail the checks `ng-prepare-data` applies (a line that is not JSON, a missing or invalid `responses_create_params`). The message lists the first invalid rows by line number and field. `ng-download-dataset` raises it for a file already at `jsonl_fpath` with invalid rows when the dataset has no Hub copy to fetch instead, and when a split\'s Parquet or JSON file cannot be converted to JSONL (an integer beyond 2^53, a binary value, a page codec it cannot decompress, a line that is not JSON); nothing is written then.',
    fix: 'Fix or remove the listed lines and upload again; `ng-prepare-data` shows the same checks. For a split that cannot be converted, set `artifact_fpath` to a JSONL file of the split.',
  },
  NG_ERR_TEST: {
    message: '%s',
    meaning:
      '`ng-test`/`ng-test-all` could not run a server\'s tests (vitest missing, a dependency of a new folder that no workspace package has installed, or an unrecognized exit code).',
    fix: 'Run `pnpm install` at the repository root; rerun one server with `ng-test +entrypoint=<dir>`.',
  },
  NG_ERR_TEMPLATES_MISSING: {
    message: 'the resources server templates were not found next to %s (expected packages/cli/templates/resources_server)',
    meaning:
      '`ng-init-resources-server` did not find the templates it copies (`packages/cli/templates/resources_server`).',
    fix: 'Run it from a full checkout of the repository (the templates are part of `packages/cli`).',
  },
});

/** The Hugging Face Hub answered with an error other than an authorization refusal (a missing repo or file, a server error). */
export const HubError = createError(CLI_ERRORS.NG_ERR_HUB, 'HubError');
/** The Hugging Face Hub refused a request for want of a token, or the token lacks access to the repo. */
export const HubAuthError = createError(CLI_ERRORS.NG_ERR_HUB_AUTH, 'HubAuthError');
/** The Hugging Face Hub could not be reached at all. */
export const HubUnreachableError = createError(CLI_ERRORS.NG_ERR_HUB_UNREACHABLE, 'HubUnreachableError');
/** A dataset file to publish has rows that fail the checks of ng-prepare-data. */
export const DatasetRowsError = createError(CLI_ERRORS.NG_ERR_DATASET_ROWS, 'DatasetRowsError');
/** A command that runs a server's tests could not run them. */
export const TestRunError = createError(CLI_ERRORS.NG_ERR_TEST, 'TestRunError');
/** The resources-server templates that ng-init-resources-server copies are missing. */
export const TemplatesMissingError = createError(CLI_ERRORS.NG_ERR_TEMPLATES_MISSING, 'TemplatesMissingError');
