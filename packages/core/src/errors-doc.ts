/**
 * docs/errors.md, made from the one error table: core's codes with the documentation below, then
 * the codes each package or server registers in its own `src/errors.ts`. `node scripts/errors-doc.mjs`
 * writes the page (after `pnpm build`); a test checks the page equals {@link renderErrorsDoc}.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS, InternalError, registeredErrors, type ErrorCode, type RegisteredError } from './errors.js';

interface CodeDoc {
  readonly meaning: string;
  readonly fix: string;
}

/** The documentation of core's codes, by section, in the order the page shows them. */
export const CORE_ERROR_DOCS: readonly { readonly title: string; readonly codes: Partial<Record<ErrorCode, CodeDoc>> }[] = [
  {
    title: 'Configuration and command line',
    codes: {
      NG_ERR_CONFIG: {
        meaning: 'The merged configuration is wrong: a YAML file that does not parse or does not exist, a `+key=value` override that does not parse, a `${…}` interpolation that names a missing key, or a server\'s config that does not match its schema. The message names the file, the key path and the expected shape.',
        fix: 'Correct the named file or override. Run `pnpm ng-dump-config "+config_paths=[…]"` to see the merged config and where each key came from.',
      },
      NG_ERR_USAGE: {
        meaning: 'A command-line argument is missing or malformed (for example `+input_jsonl_fpath` points to a file that does not exist, or a count is not a whole number).',
        fix: 'Run the command with `--help` for its parameters and give the one the message names.',
      },
      NG_ERR_SERVER_DEFINITION: {
        meaning: 'A server\'s `app.ts` declares something the runtime cannot serve, such as a tool named `seed_session` or `verify` (those routes are built in).',
        fix: 'Rename the tool in the server\'s definition.',
      },
    },
  },
  {
    title: 'Talking to other servers',
    codes: {
      NG_ERR_HTTP: {
        meaning: 'A route handler answered an HTTP error on purpose (`throw new HttpError(status, detail)`); the client receives `status` and `{"detail": detail}`. Seen as a code mostly in tests and logs.',
        fix: 'Read the detail: it says what the request got wrong.',
      },
      NG_ERR_SERVER_RESPONSE: {
        meaning: 'Another server answered with an error status; the message holds its URL, status and (the start of) its body.',
        fix: 'Look at the logs of the named server for the cause; a 422 means the request did not match its schema, a 5xx a failure inside it.',
      },
      NG_ERR_SERVER_UNREACHABLE: {
        meaning: 'A request to another server could not be completed: connection refused or reset, or no answer in time, after the retry budget.',
        fix: 'Check that the server is running (`ng-run` prints every instance and its URL) and that the host and port in the config are the ones it listens on.',
      },
      NG_ERR_TIMEOUT: {
        meaning: 'An operation did not finish within its time budget: a request, a worker-pool task, a regular expression on model output.',
        fix: 'Raise the timeout named in the message if the work is legitimately slow; otherwise look for what hangs (a server that stopped answering, a pathological input).',
      },
      NG_ERR_MODEL_UNREACHABLE: {
        meaning: 'The model could not be reached: a model server could not reach its backend (connection refused or reset, a body that is not JSON, a 5xx), or an agent or a judge could not reach its model server or got a 5xx from it. Agents and judges pass this code on in their own answers, so the collector records the rollout as `model unreachable` whichever hop saw it.',
        fix: 'Check that the model backend runs and answers at the base URL of the model server config (`curl <base_url>/models`), and the model server\'s log.',
      },
      NG_ERR_MODEL_TIMEOUT: {
        meaning: 'The model backend did not answer within the model server\'s `request_timeout_s`; the model server answers 504. Agents and judges pass this code on, so the collector records the rollout as a `timeout`.',
        fix: 'Check that the backend is not overloaded (lower the collection\'s concurrency), or raise `request_timeout_s` for long generations.',
      },
      NG_ERR_VERIFY_FAILED: {
        meaning: 'A resources server\'s `/verify` answered an error to the agent that asked it (a bad verify request, a verifier that failed). The agent answers `/run` with this code (unless the failure behind it was a model timeout or an unreachable model, whose codes it keeps), and the collector records the rollout as a `verify error`, never as reward 0.',
        fix: 'Read the detail: it holds the resources server\'s answer; look at that server\'s log.',
      },
      NG_ERR_JUDGE_FAILED: {
        meaning: 'A verifier asked an LLM judge and got no verdict: the judge model server answered an HTTP error, timed out, or answered with no parseable verdict label. That is not a wrong answer: `/verify` answers 502 with this code (and the agent passes the verify request on beside it), and the collector records the rollout as `judge failed` in `<output>_failures.jsonl`, never as reward 0.',
        fix: 'Look at the judge model server (its log, its backend, its rate limits). Once it answers again, re-score just these rollouts without calling the policy model: `ng-reverify +input=<rollouts> +output=<new file> +judge_failed_only=true +resources_server=<name>`. A server whose recorded rewards counted an unparseable verdict as wrong (upstream 818984b8e) keeps that with `unparseable_verdict_is_wrong: true`.',
      },
      NG_ERR_BAD_JSON: {
        meaning: 'A server answered with a body that is not JSON where JSON was expected.',
        fix: 'The message shows the start of the body: usually a proxy\'s HTML error page or a server that crashed mid-answer. Check the URL and the server\'s logs.',
      },
      NG_ERR_UNKNOWN_SERVER: {
        meaning: 'A server ref names an instance that is not in the config (or has no host/port).',
        fix: 'Use one of the instance names the message lists, or add the instance\'s config to `config_paths`.',
      },
      NG_ERR_HEAD_SERVER: {
        meaning: 'The head server (which serves the merged config to every process) could not be reached or did not answer its config.',
        fix: 'Start the servers first with `pnpm ng-run "+config_paths=[…]"`, or pass `+head_server.port=<port>` if the head server runs on another port.',
      },
      NG_ERR_CONVERSION: {
        meaning: 'A Responses API request has no Chat Completions equivalent (for example a non-function tool, or `tool_choice` without tools) and cannot be sent to a Chat Completions backend. Answered 400.',
        fix: 'Change the request as the message says, or use a model server that speaks the Responses API.',
      },
      NG_ERR_HEAD_TOKEN: {
        meaning: 'A request that changes the deployment (`POST /stop` from ng-stop, `POST /server_instances/register` or `/deregister` from an `ng-run` that joins) reached the head server without the deployment token, or with a different one. The head server answers 401 and changes nothing; the token itself is never printed or logged.',
        fix: 'Give every host the same token: `head_server: {token: …}` in env.yaml (at least 16 characters, e.g. from `openssl rand -hex 32`), `+head_server.token=…`, or the `NEMO_GYM_HEAD_TOKEN` environment variable. When no token is configured, the `ng-run` that starts the head server makes one for its run and keeps it in a private file that ng-stop and `ng-run +only=[…]` on the same host read, so a one-host deployment needs nothing; a host that joins from elsewhere needs the configured token.',
      },
    },
  },
  {
    title: 'Rollout collection',
    codes: {
      NG_ERR_BAD_ROW: {
        meaning: 'An input row cannot be run: an empty line, a line that is not a JSON object, or a row without a `responses_create_params` object. The rollout is recorded as failed with this reason; the collection goes on. `ng-export`, `ng-import` and `ng-reverify` use the same code for a row they cannot convert or verify (no response, token ids that do not line up, a trajectory not in its format\'s shape); they count such rows by reason with their line numbers and go on.',
        fix: 'Correct the named line of the input file and rerun; resume runs only the missing rollouts.',
      },
      NG_ERR_BAD_RESULT: {
        meaning: 'An agent answered `/run` with something that is not a JSON object.',
        fix: 'The agent\'s `/run` handler must return the verify response (an object with `reward`).',
      },
      NG_ERR_RESUME_MISMATCH: {
        meaning: 'The output file already holds rollouts of a different run (another input file, limit, num_repeats, agent or overrides), so resuming into it would mix runs.',
        fix: 'Rerun with `+restart=true` to start over, or choose another `+output_jsonl_fpath`.',
      },
      NG_ERR_COLLECT_FILE: {
        meaning: 'ng-collect-rollouts cannot use one of its files: the input is missing or unreadable, the output (or its `_failures.jsonl`, `_metrics.json`, `_state.json`) is the input file, a part of the output path is a regular file, or the output cannot be written (permissions, read-only or full disk). Nothing has been written when this is reported before the run; during a run, what was written stays.',
        fix: 'The message names the path and the cause: choose another `+output_jsonl_fpath`, fix the permissions or free disk space, then run the same command again (it resumes).',
      },
      NG_ERR_GROUP_VERIFY: {
        meaning: 'The rollouts of one task were to be scored together by their resources server\'s `/verify_group` (docs/group-rewards.md), and the group was not scored: a member failed or did not finish within `group_wait_timeout_s` while `group_member_failure` is `fail_group`, a member finished after its group was scored, or `/verify_group` answered without one finite reward for each member. Each member concerned is recorded in `<stem>_failures.jsonl` with this reason (class `group_failed`), never written with a reward.',
        fix: 'Read the reason: raise `group_wait_timeout_s` when members are slow, choose `group_member_failure=score_rest` to score a group on the members that finished, or fix the resources server\'s `/verify_group` answer. A rerun runs the members of every group that was not scored again; a group already in the output is not scored twice.',
      },
      NG_ERR_FILE: {
        meaning: 'A command (ng-export, ng-import, ng-reverify, ng-merge-rollouts, …) cannot use one of its files: an input is missing, a folder or unreadable; an output is one of the inputs (compared as files: `./a.jsonl`, a symbolic or a hard link to the input all count); an output is a folder, a device or pipe, or on `/proc` or `/sys`; a part of the output path is a regular file; or writing failed (permissions, a read-only or full disk). Inputs are checked before any output is opened, and outputs are written to a temporary file beside them and renamed into place, so the output keeps what it held before whenever this is reported.',
        fix: 'The message names the path, the cause and the flag to change: fix the path or choose another output, fix the permissions or free disk space, then run the same command again. Nothing needs cleaning up: a temporary file left by a killed run is removed by the next one.',
      },
      NG_ERR_OUTPUT_LOCKED: {
        meaning: 'Another process is writing the same output: its lock file `<output>.lock` names its command, pid, host and start time. Two writers of one output would double or tear its rows, so the second is refused. (A lock left by a process that no longer runs on this host is taken over with a one-line notice instead; one held on another host is never taken over.)',
        fix: 'Wait for that process to finish, or stop it, or write to another output. If the holder runs on another host that crashed, delete the lock file named in the message and run again.',
      },
      NG_ERR_PREFLIGHT: {
        meaning: 'A check before the first rollout failed: the agent is not in the running config, one of the servers it uses does not answer, or the model backend behind a model server does not answer its model list (`GET /v1/models`, one cheap request). Nothing has been sent or written.',
        fix: 'The message names the server and the cause: fix the agent name (a suggestion is given), start the servers with `ng-run`, or fix the model server\'s base URL / API key / the backend.',
      },
    },
  },
  {
    title: 'Per-rollout model routes and token capture',
    codes: {
      NG_ERR_ROLLOUT_ID: {
        meaning: 'A rollout id was malformed: the `<id>` of a `/ng-rollout/<id>/…` model route (or the route after it is missing), or `_ng_rollout_id`, `_ng_task_index`, `_ng_rollout_index` or `_ng_attempt_index` of a run request. An id is letters, digits, dots, dashes and underscores, starting with a letter or digit, at most 200 characters; it is refused, never rewritten.',
        fix: 'Send an id of that form (upstream\'s rule), e.g. `17-3` or `17-3-a1`; see [capture](token-capture.md).',
      },
      NG_ERR_CAPTURE_NOT_FOUND: {
        meaning: 'The model server holds no capture for the rollout asked about: no model call came through `/ng-rollout/<id>/…`, or the capture was already released, expired after `rollout_capture.ttl_s`, or was evicted to stay within `rollout_capture.max_bytes` / `max_rollouts` (the message says which).',
        fix: 'Point the agent at the per-rollout base URL; fetch the capture before the TTL; raise the limits.',
      },
      NG_ERR_CAPTURE_NO_TOKEN_IDS: {
        meaning: 'A capture was asked for with `require_token_ids=true`, but a call\'s backend gave no token ids (openai_model, azure_openai_model and replay_model never do; vllm_model only with `return_token_id_information: true`). The message names the calls.',
        fix: 'Serve the policy through vllm_model with `vllm_model_for_training.yaml`; without `require_token_ids` the trajectory is returned with `mask_sample: true` instead.',
      },
    },
  },
  {
    title: 'Worker pool',
    codes: {
      NG_ERR_POOL_CLOSED: {
        meaning: 'A task was given to a worker pool that is closed (its server is shutting down).',
        fix: 'Do not run tasks after `close()`; during shutdown this is expected.',
      },
      NG_ERR_POOL_TASK: {
        meaning: 'A task failed inside its worker (the message holds the worker\'s error), or the worker module does not export the function asked for.',
        fix: 'Fix the task function or its input; check the exported function name.',
      },
      NG_ERR_POOL_WORKER: {
        meaning: 'A worker could not start (its task module fails to load, or the worker exits before it is ready); the tasks waiting for it fail with this code. A worker that dies while it runs a task is NG_ERR_POOL_WORKER_DIED.',
        fix: 'The message holds the reason (a module that fails to load, out of memory). A worker that cannot start points to a broken build (`pnpm build`).',
      },
      NG_ERR_POOL_WORKER_DIED: {
        meaning: 'A worker thread or process died while it ran a task (killed, out of memory, a crash in native code); the task fails with this code and the worker is replaced for the next tasks.',
        fix: 'Look for the reason in the message (an exit code or signal); raise the memory limit, or find the input that makes the task crash.',
      },
    },
  },
  {
    title: 'Datasets and metrics',
    codes: {
      NG_ERR_PY_JSON_DECODE: {
        meaning: 'Text is not valid JSON as Python\'s `json.loads` reads it; the message holds the reason and the character offset.',
        fix: 'Correct the JSON at that offset (the line number is in the surrounding message).',
      },
      NG_ERR_METRICS_KEY_COLLISION: {
        meaning: 'A dataset row has a top-level key with the name of a built-in metric field, so its values cannot be aggregated.',
        fix: 'Rename the key in the dataset.',
      },
      NG_ERR_MIXED_METRIC_TYPES: {
        meaning: 'A dataset key holds numbers in some rows and strings in others, so it cannot be aggregated.',
        fix: 'Make the key\'s values one type across the dataset.',
      },
      NG_ERR_METRICS_CONFLICT: {
        meaning: 'ng-prepare-data computed aggregate metrics that differ from the metrics file already next to the dataset (often after a change in how metrics are computed).',
        fix: 'Delete the metrics files the message lists and rerun data preparation.',
      },
      NG_ERR_PREPARE_CONFIG: {
        meaning: 'ng-prepare-data found server configs with validation errors, an existing metrics file that is not JSON, or an output folder whose parent does not exist.',
        fix: 'As the message says: fix the listed entries (or set `error_on_almost_servers=false`), delete the broken metrics file, or choose another `output_dirpath`.',
      },
      NG_ERR_PREPARE_MISSING_DATASETS: {
        meaning: 'Datasets named in the config are missing and cannot be downloaded (download disabled, no registry configured, or no identifier to download from).',
        fix: 'Place the files at their `jsonl_fpath`, or run with `+should_download=true` where a download source is configured.',
      },
      NG_ERR_PREPARE_COLLATE: {
        meaning: 'A dataset row could not be collated into the prepared file (for example a row that is not a JSON object cannot get an `agent_ref`).',
        fix: 'Correct the row at the file and line the message names.',
      },
      NG_ERR_DATA_DOWNLOAD: {
        meaning: 'A data file a server needs (for example WorkBench\'s tables) could not be downloaded from its publisher, or arrived with a checksum that does not match. The server reports it as a config problem naming the folders it looked in.',
        fix: 'Check network access to the URL in the message, or download the files yourself into one of the folders the message lists (workbench: point `csv_data_dir` at them). `ng-download-dataset` raises it when a downloaded file\'s size or SHA-256 differs from what the Hugging Face Hub publishes for it; the file is deleted, not left in place. Run the command again; if it repeats, the Hub\'s copy changed during the download or a proxy alters the file.',
      },
    },
  },
  {
    title: 'Python semantics',
    codes: {
      NG_ERR_PY_REGEX: {
        meaning: 'A regular expression from a dataset or a model is not valid Python `re` syntax; the message holds the reason and the position.',
        fix: 'Correct the pattern at that position.',
      },
      NG_ERR_PY_REGEX_UNSUPPORTED: {
        meaning: 'A valid Python regular expression uses a construct JavaScript cannot express (the message names it and its position).',
        fix: 'Rewrite the pattern without that construct.',
      },
      NG_ERR_PY_EXCEPTION: {
        meaning: 'Code that reproduces Python behaviour raised where Python raises (`TypeError`, `ValueError`, …); the message is the Python exception\'s text. Servers that mirror upstream return it the way upstream does (for example as a tool\'s error output).',
        fix: 'Usually nothing: it is the answer upstream gives for that input. If it is unexpected, the message says which value Python would reject.',
      },
    },
  },
  {
    title: 'Limits on requests',
    codes: {
      NG_ERR_BODY_TOO_DEEP: {
        meaning: 'A request body nests arrays/objects deeper than a server accepts (500 levels); it is refused with 400 before it is parsed, since every walk over such a body would overflow the stack.',
        fix: 'Send a flatter body; deeply nested data can travel as a JSON string inside a field.',
      },
      NG_ERR_BODY_TOO_LARGE: {
        meaning: 'A request body is larger than a server accepts (answered 413, before it is read whole).',
        fix: 'Send less data per request (e.g. shorter histories, or images by URL instead of inline).',
      },
      NG_ERR_PY_REGEX_LIMIT: {
        meaning: 'A regular expression from a dataset or a request is longer (10,000 characters) or nests groups deeper (200 levels) than the translator compiles; a server answers 422.',
        fix: 'Shorten or flatten the pattern (e.g. a character class instead of a long alternation).',
      },
      NG_ERR_CLIENT_GONE: {
        meaning: 'The client of a request closed its connection before the answer was ready (it timed out, or the collection was stopped). The server cancelled the calls it had made for that request (other servers, the model backend); the answer (499) reaches no one and is not logged as an error.',
        fix: 'Nothing to fix on the server. If callers time out too early, raise their timeout (`http_headers_timeout_s` for servers and the collector).',
      },
    },
  },
  {
    title: 'Gymnasium environments',
    codes: {
      NG_ERR_ENV_RESET_FAILED: {
        meaning: 'A Gymnasium-style resources server\'s `reset` threw while starting an episode (`POST /reset`). The message names the server class and the error. `gymnasium_agent` answers `/run` with this code and the collector records the rollout as a failure, never as reward 0.',
        fix: 'Read the message and the resources server\'s log: usually the row lacks a field `reset` reads (a seed, a board), or the environment\'s own set-up failed.',
      },
      NG_ERR_ENV_STEP_FAILED: {
        meaning: 'A Gymnasium-style resources server\'s `step` threw while applying the model\'s action (`POST /step`). The episode is left as it was before the step; `gymnasium_agent` answers `/run` with this code and the rollout is recorded as a failure.',
        fix: 'Read the message and the resources server\'s log. An action the model got wrong (an illegal move, an unparsable answer) should be answered by `step` itself (a penalty, an observation saying why), not thrown.',
      },
      NG_ERR_ENV_NO_EPISODE: {
        meaning: '`POST /step` came for a session that has no open episode: `/reset` was not called on it, the episode ended (terminated or truncated) and a new step came with another step key, or it was closed with `/close`.',
        fix: 'Call `/reset` first with the same session cookie (`gymnasium_agent` does); start a new episode with a new `/reset` after one ends.',
      },
    },
  },
  {
    title: 'In-process agents',
    codes: {
      NG_ERR_AGENT_FUNCTION: {
        meaning: 'The agent function of an in-process agent (`defineInProcessAgent`: an OpenAI Agents SDK, LangGraph.js or AI SDK agent run by the agent server) threw — for example its framework gave up on a model error or an answer it could not parse — or one of its tool calls could not reach the resources server (even when the framework caught that error and went on). The rollout is recorded as a failure with the error\'s message, never scored.',
        fix: 'Read the message: it names the rollout and the error the function threw. Run the agent\'s tests (`pnpm vitest run responses_api_agents/<agent>`), check the model server\'s log for the rollout\'s calls (`/ng-rollout/<id>/…`), and the resources server\'s log for a failed tool call.',
      },
    },
  },
  {
    title: 'A bug',
    codes: {
      NG_ERR_INTERNAL: {
        meaning: 'An invariant of the code itself did not hold. This is a bug, not a problem with your input or config.',
        fix: 'Report it with the message and what you ran.',
      },
    },
  },
];

const INTRO = `# Error codes

<!-- Generated from the error table by \`node scripts/errors-doc.mjs\` (after \`pnpm build\`): edit the table, not this page. -->

Every error NeMo Gym raises on purpose carries a stable \`code\` (\`err.code\`, always \`NG_ERR_*\`) and a
message that says what went wrong, where, and how to fix it. Match on the code, not on the message:
messages may be reworded, codes are not.

\`\`\`ts
import { NgError } from '@nemo-gym/core/errors';

try {
  await pool.run('check', input);
} catch (err) {
  if (err instanceof NgError && err.code === 'NG_ERR_POOL_CLOSED') {
    // ...
  }
}
\`\`\`

The codes live in one table. Core's are \`ERRORS\` in \`packages/core/src/errors.ts\`; a package or server
registers the codes only it raises in its own \`src/errors.ts\` with \`registerErrorCodes(owner, table)\`
(message template, status, meaning, fix), so a new environment adds an error without editing core.

A server answers an error a handler lets escape as follows: \`NG_ERR_HTTP\` with its own status and
\`{"detail": …}\`; a code whose table entry has a status with that status and \`{"detail": message, "code": code}\`;
anything else with a logged 500 and \`{"detail": …, "code": code}\` when the error has a code. The \`detail\`
is upstream's FastAPI shape; the \`code\` crosses every hop: an error raised from another server's answer
(\`ServerResponseError\`), a worker thread's error and a queue worker's failure record keep the code they
carried, and agents and judges pass on the code of a model or verify failure, so the collector classifies
each failed rollout by code and status, never by its text.

Commands print \`ng-<command>: <message>\` and exit with 2 for \`NG_ERR_USAGE\`, 1 for every other code.
`;

function section(code: string, doc: CodeDoc, owner?: string): string {
  const owned = owner === undefined ? '' : `**Owner.** \`${owner}\`\n`;
  return `### ${code}\n${owned}**Meaning.** ${doc.meaning}\n**Fix.** ${doc.fix}\n`;
}

/** The page for `errors` (default: every code registered in this process). */
export function renderErrorsDoc(errors: readonly RegisteredError[] = registeredErrors()): string {
  const parts = [INTRO];
  const documented = new Set<string>();
  for (const { title, codes } of CORE_ERROR_DOCS) {
    parts.push(`## ${title}\n`);
    for (const [code, doc] of Object.entries(codes) as [string, CodeDoc][]) {
      parts.push(section(code, doc));
      documented.add(code);
    }
  }
  const undocumented = Object.keys(ERRORS).filter((c) => !documented.has(c));
  if (undocumented.length) throw new InternalError(`core codes without documentation in errors-doc.ts: ${undocumented.join(', ')}`);
  const owned = errors.filter((e) => e.owner !== 'core');
  if (owned.length) {
    parts.push('## Codes of packages and servers\n', 'Each is registered by its owner in its own `src/errors.ts`.\n');
    for (const e of [...owned].sort((a, b) => (a.owner + a.code < b.owner + b.code ? -1 : 1))) parts.push(section(e.code, e.doc ?? { meaning: '(undocumented)', fix: '(undocumented)' }, e.owner));
  }
  return parts.join('\n');
}

/** The folders that hold packages and servers, each of which may own codes. */
const OWNER_GROUPS = ['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents'];

/**
 * The modules that register codes, relative to the repo root: every package's or server's
 * `src/errors.ts` (core's own table excluded). `ext: 'js'` names their built copies under `dist/`.
 */
export function errorOwnerModules(root: string, ext: 'ts' | 'js' = 'ts'): string[] {
  const out: string[] = [];
  for (const group of OWNER_GROUPS) {
    let names: string[];
    try {
      names = readdirSync(join(root, group)).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      if (group === 'packages' && name === 'core') continue;
      const rel = ext === 'ts' ? join(group, name, 'src', 'errors.ts') : join(group, name, 'dist', 'src', 'errors.js');
      if (existsSync(join(root, group, name, 'src', 'errors.ts'))) out.push(rel);
    }
  }
  return out;
}
