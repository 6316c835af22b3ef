// One SWE instance end to end: an environment with the repository at `base_commit`, the agent
// loop (or the gold patch with run_golden), the evaluation, and the environment removed.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { repoRoot } from '@nemo-gym/core/config';
import { ClientGoneError, createError } from '@nemo-gym/core/errors';
import { MINI_SWE_AGENT_ERRORS } from './errors.js';
import type { Sandbox } from '@nemo-gym/sandbox';
import { EnvironmentError, SandboxShell, type SweEnvironment } from './environment.js';
import { runEpisode, type ChatMessage, type EpisodeOptions, type ExitStatus, type ModelCall, type TokenFields } from './episode.js';
import { applyPatchCommand, evalScript, gradeLog, LOG_PARSERS, repoSpec, shellQuote, type InstanceReport, type RepoSpec } from './swebench.js';

/** The fields of a SWE-Gym / SWE-bench row the runner reads. */
export interface SweInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  patch?: string;
  test_patch: string;
  FAIL_TO_PASS?: unknown;
  PASS_TO_PASS?: unknown;
  [key: string]: unknown;
}

export interface EvalResult {
  instance_id: string;
  model_patch: string;
  /** `{<instance_id>: report}` (the id as the row gives it). */
  eval_report: Record<string, InstanceReport>;
}

export interface RunnerResult {
  messages: ChatMessage[];
  replies: TokenFields[];
  exitStatus: ExitStatus | 'GoldPatchApplied';
  evalResult: EvalResult;
  steps: number;
  formatErrors: number;
  timeouts: number;
}

export interface RunnerOptions {
  episode: EpisodeOptions;
  runGolden: boolean;
  evalTimeoutS: number;
  /** Where the repository of an instance is cloned from: `{repo}`, `{repo_name}`, `{instance_id}`. */
  repoPathTemplate: string | null;
  repoSpecs: Record<string, Partial<RepoSpec>>;
  memoryBytes: number;
  maxOutputBytes: number;
}

/** A row that cannot be run (see NG_ERR_SWE_INSTANCE). */
export const InstanceError = createError(MINI_SWE_AGENT_ERRORS.NG_ERR_SWE_INSTANCE, 'SweInstanceError');

/** The local source of an instance's repository (a git repository or bundle on this machine). */
export function repoSource(template: string | null, instance: SweInstance): string {
  if (!template) {
    throw new InstanceError(
      `env local needs repo_path_template (e.g. /data/repos/{repo}) to find a checkout of ${instance.repo} for instance ${instance.instance_id}`,
    );
  }
  const name = instance.repo.split('/').at(-1) ?? instance.repo;
  const filled = template.replaceAll('{repo}', instance.repo).replaceAll('{repo_name}', name).replaceAll('{instance_id}', instance.instance_id);
  const path = isAbsolute(filled) ? filled : resolve(repoRoot(), filled);
  if (!existsSync(path)) {
    throw new InstanceError(`the repository of instance ${instance.instance_id} is not at ${path} (repo_path_template: ${template}); clone ${instance.repo} there or change the template`);
  }
  return path;
}

export function checkInstance(row: Record<string, unknown>): SweInstance {
  const missing = ['instance_id', 'repo', 'base_commit', 'problem_statement', 'test_patch'].filter((k) => typeof row[k] !== 'string');
  if (missing.length) throw new InstanceError(`the row lacks ${missing.join(', ')} (strings), needed to run a SWE instance`);
  return row as SweInstance;
}

/** Clones the repository into the shell's work folder and checks out `base_commit`. */
async function prepareLocal(shell: SandboxShell, source: string, instance: SweInstance, timeoutS: number): Promise<void> {
  const cmd =
    `git clone -q --no-hardlinks ${shellQuote(source)} testbed && cd testbed && ` +
    `git -c advice.detachedHead=false checkout -q ${shellQuote(instance.base_commit)} && git status --porcelain`;
  const r = await shell.execute(cmd, timeoutS, shell.workdir);
  if (r.timedOut || r.returncode !== 0) {
    throw new InstanceError(`could not check out ${instance.repo} at ${instance.base_commit} for ${instance.instance_id}: ${r.timedOut ? 'timed out' : `exit ${r.returncode}`}: ${r.output.slice(-1000)}`);
  }
}

export async function evaluate(env: SweEnvironment, instance: SweInstance, modelPatch: string, opts: RunnerOptions): Promise<InstanceReport> {
  const spec = repoSpec(instance.repo, opts.repoSpecs);
  const parser = LOG_PARSERS[spec.parser];
  if (!parser) throw new InstanceError(`repo_specs: unknown log parser '${spec.parser}' for ${instance.repo}; known: ${Object.keys(LOG_PARSERS).join(', ')}`);
  const r = await env.execute(evalScript(instance, spec), opts.evalTimeoutS);
  if (r.timedOut) {
    return { patch_is_None: false, patch_exists: Boolean(modelPatch), patch_successfully_applied: false, resolved: false, error: `Evaluation timed out after ${opts.evalTimeoutS} seconds`, timeout: true };
  }
  return gradeLog(r.output, instance, modelPatch, parser);
}

/** Opens the environment of one instance with its repository ready at `repoDir`. */
export type OpenEnvironment = (instance: SweInstance, signal?: AbortSignal) => Promise<SweEnvironment>;

/** env local: a sandboxed shell with a fresh checkout of the instance's repository. */
export function localEnvironment(sandbox: Sandbox, opts: Pick<RunnerOptions, 'repoPathTemplate' | 'memoryBytes' | 'maxOutputBytes' | 'evalTimeoutS'>): OpenEnvironment {
  return async (instance) => {
    const source = repoSource(opts.repoPathTemplate, instance);
    const shell = await SandboxShell.start(sandbox, { readablePaths: [source], memoryBytes: opts.memoryBytes, maxOutputBytes: opts.maxOutputBytes, startupTimeoutS: 60 });
    try {
      await prepareLocal(shell, source, instance, opts.evalTimeoutS);
    } catch (err) {
      await shell.close();
      throw err;
    }
    return shell;
  };
}

/** Runs the instance in a fresh environment; the environment is always removed, also when
 * `signal` aborts (the client went away): then the episode stops at once with the signal's
 * reason. */
export async function runInstance(
  open: OpenEnvironment,
  instance: SweInstance,
  model: ModelCall,
  opts: RunnerOptions,
  initial?: ChatMessage[],
  signal?: AbortSignal,
): Promise<RunnerResult> {
  signal?.throwIfAborted();
  const env = await open(instance, signal);
  const onAbort = () => void env.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    signal?.throwIfAborted();
    let messages: ChatMessage[] = [];
    let replies: TokenFields[] = [];
    let exitStatus: RunnerResult['exitStatus'];
    let modelPatch: string;
    let steps = 0;
    let formatErrors = 0;
    let timeouts = 0;
    if (opts.runGolden) {
      const gold = instance.patch ?? '';
      const r = await env.execute(applyPatchCommand(gold), opts.episode.stepTimeoutS);
      if (r.timedOut || r.returncode !== 0) throw new InstanceError(`the gold patch of ${instance.instance_id} did not apply: ${r.output.slice(-1000)}`);
      exitStatus = 'GoldPatchApplied';
      modelPatch = gold;
    } else {
      const ep = await runEpisode(env, instance.problem_statement, model, opts.episode, initial, signal);
      ({ messages, replies, steps, formatErrors, timeouts } = ep);
      exitStatus = ep.exitStatus;
      modelPatch = ep.submission && !ep.submission.endsWith('\n') ? `${ep.submission}\n` : ep.submission;
    }
    signal?.throwIfAborted();
    const report = await evaluate(env, instance, modelPatch, opts);
    signal?.throwIfAborted();
    return {
      messages,
      replies,
      exitStatus,
      evalResult: { instance_id: instance.instance_id, model_patch: modelPatch, eval_report: { [instance.instance_id]: report } },
      steps,
      formatErrors,
      timeouts,
    };
  } catch (err) {
    // A failure caused by the environment being removed on abort is the abort.
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new ClientGoneError();
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await env.close();
  }
}

export { EnvironmentError };
