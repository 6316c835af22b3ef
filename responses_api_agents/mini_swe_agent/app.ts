/**
 * mini_swe_agent: a bash-only software-engineering agent. `/run` takes a SWE-Gym / SWE-bench row,
 * checks the repository out at `base_commit` in a sandbox, lets the model work one shell command
 * per reply until it submits, evaluates the result with the instance's tests (FAIL_TO_PASS /
 * PASS_TO_PASS) and answers the rollout row: reward 1.0 when the instance is resolved.
 * `/v1/responses` is not offered (an episode needs a row, not just a prompt).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '@nemo-gym/core/config';
import { answerCode, HttpError, NgError } from '@nemo-gym/core/errors';
import { fullCreateParamsDump, ResponseCreateParamsSchema } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, defineAgent, startIfMain, type Logger } from '@nemo-gym/core/server';
import { relayedCode, type ServerClient } from '@nemo-gym/core/client';
import { Sandbox, SlotPool, removeStaleContainers, sandboxConfigShape, sandboxOptionsFromConfig } from '@nemo-gym/sandbox';
import { ApptainerEnvironment, checkApptainer, removeStaleInstances, type ApptainerSettings } from './src/apptainer.js';
import { ContainerEnvironment, type ContainerEnvSettings } from './src/container.js';
import { COMMAND_ENV, type SweEnvironment } from './src/environment.js';
import { runHost } from './src/host.js';
import { checkTemplates, DEFAULT_IMAGE_TEMPLATES, imageName } from './src/images.js';
import type { ChatMessage, ModelCall } from './src/episode.js';
import { chatToResponseItems, contentText, episodeResponse, type Json } from './src/response.js';
import { checkInstance, InstanceError, localEnvironment, runInstance, type OpenEnvironment, type RunnerOptions, type SweInstance } from './src/runner.js';
import { isResolved } from './src/swebench.js';
import { loadTemplates, type Templates } from './src/templates.js';

const TemplatePathsSchema = z
  .object({
    system: z.string(),
    instance: z.string(),
    observation: z.string(),
    observation_long: z.string(),
    format_error: z.string(),
    timeout: z.string(),
    collapse: z.string(),
  })
  .partial()
  .strict();

export const MiniSweAgentConfigSchema = AgentServerConfigSchema.extend({
  model_server: ModelServerRefSchema,
  resources_server: ResourcesServerRefSchema.optional(),
  /** Where episodes run. `local`: a sandboxed checkout on this machine (see `sandbox_provider`);
   * `docker` / `podman`: one container of the instance's image (`container` keys); `singularity` /
   * `apptainer`: one instance of its `.sif` image (`cache_dir_template`, `singularity` keys). */
  env: z.enum(['local', 'docker', 'podman', 'singularity', 'apptainer']),
  /** Episodes at once (upstream's semaphore). */
  concurrency: z.coerce.number().int().min(1),
  cache_dir_template: z.string().nullable().default(null),
  run_golden: z.boolean().default(false),
  step_timeout: z.coerce.number().positive().default(600),
  eval_timeout: z.coerce.number().positive().default(1800),
  skip_if_exists: z.boolean().default(false),
  step_limit: z.coerce.number().int().min(0).default(250),
  collapse_limit: z.coerce.number().int().min(0).default(3),
  // Ours (see README).
  /** env local: where each instance's repository is cloned from; `{repo}` (owner/name),
   * `{repo_name}`, `{instance_id}`; relative paths are from the repository root. */
  repo_path_template: z.string().nullable().default(null),
  /** Results folder (upstream: `results` under the working directory); each row is written to
   * `<results_dir>/<subset>/<policy_model_name>/<id>/<id>.json`. */
  results_dir: z.string().default('results'),
  /** Template files (absolute or relative to the repository root) replacing the defaults. */
  templates: TemplatePathsSchema.default({}),
  /** Sampling defaults when the request sets none (upstream's swebench.yaml). */
  default_temperature: z.coerce.number().default(0.6),
  default_top_p: z.coerce.number().default(0.95),
  /** Observations of this many characters or more show head and tail only. */
  long_output_chars: z.coerce.number().int().min(100).default(10_000),
  /** Output bytes kept per command. */
  max_output_bytes: z.coerce.number().int().min(1024).default(8 * 1024 * 1024),
  /** Address-space limit per process in the episode's sandbox, MiB (0 = none). */
  memory_limit_mb: z.coerce.number().int().min(0).default(8192),
  /** Per-repository overrides of the test-command table: `{<owner/name> | default: {testCommand, parser}}`. */
  repo_specs: z.record(z.string(), z.object({ testCommand: z.string().optional(), parser: z.string().optional() })).default({}),
  /** env docker / podman. */
  container: z
    .object({
      /** The engine program (default: the env's name). */
      engine: z.string().nullable().default(null),
      runtime: z.string().nullable().default(null),
      /** Image name per row `subset` (`{instance_id}`, `{instance_id_s}`, `{instance_id_1776}`);
       * replaces upstream's names per key; a row's own `image_name` wins. */
      image_templates: z.record(z.string(), z.string()).default({}),
      pull: z.enum(['missing', 'never']).default('missing'),
      pull_timeout: z.coerce.number().positive().default(1800),
      start_timeout: z.coerce.number().positive().default(120),
      workdir: z.string().default('/testbed'),
      network: z.string().default('none'),
      run_args: z.array(z.string()).default([]),
      pids_limit: z.coerce.number().int().min(1).default(4096),
    })
    .strict()
    .default({ engine: null, runtime: null, image_templates: {}, pull: 'missing', pull_timeout: 1800, start_timeout: 120, workdir: '/testbed', network: 'none', run_args: [], pids_limit: 4096 }),
  /** env singularity / apptainer (the `.sif` path comes from `cache_dir_template`). */
  singularity: z
    .object({
      executable: z.string().nullable().default(null),
      pull: z.enum(['missing', 'never']).default('missing'),
      pull_timeout: z.coerce.number().positive().default(1800),
      start_timeout: z.coerce.number().positive().default(300),
      workdir: z.string().default('/testbed'),
      start_args: z.array(z.string()).default([]),
      binds: z.array(z.string()).default([]),
    })
    .strict()
    .default({ executable: null, pull: 'missing', pull_timeout: 1800, start_timeout: 300, workdir: '/testbed', start_args: [], binds: [] }),
  ...sandboxConfigShape('auto'),
});
export type MiniSweAgentConfig = z.output<typeof MiniSweAgentConfigSchema>;

export const MiniSweRunRequestSchema = BaseRunRequestSchema.loose();

interface State {
  /** env local only. */
  sandbox: Sandbox | null;
  episodes: SlotPool;
  templates: Templates;
  open: (subset: string) => OpenEnvironment;
  /** Environments (sandboxes, containers, instances) open now, and the most at once. */
  live: { now: number; max: number };
}

/** Upstream's `or`: a value that is unset or falsy (0.0 included) gives the default. */
export function orDefault(value: number | null | undefined, fallback: number): number {
  return value ? value : fallback;
}

const SAFE_ID = /^[A-Za-z0-9._-]+$/;

function resultPath(config: MiniSweAgentConfig, subset: string, model: string, id: string): string {
  for (const [what, v] of [['subset', subset], ['instance_id', id]] as const) {
    if (!SAFE_ID.test(v) || v === '.' || v === '..') throw new HttpError(422, `${what} '${v}' cannot name a results folder: use letters, digits, '.', '_' and '-' only`);
  }
  return join(resolve(config.results_dir), subset, model.replaceAll('/', '_'), id, `${id}.json`);
}

function modelCaller(client: ServerClient, config: MiniSweAgentConfig, model: string, temperature: number, topP: number, signal?: AbortSignal): ModelCall {
  let cookies: Record<string, string> = {};
  const name = config.model_server.name;
  return async (messages) => {
    const res = await client.post(name, '/v1/chat/completions', { model, messages, temperature, top_p: topP }, { cookies, signal });
    if (!res.ok) {
      const body = res.text.length > 2000 ? `${res.text.slice(0, 2000)}…` : res.text;
      // The row keeps the code of what failed behind the model server (metadata.error_code).
      throw new InstanceError(`model server \`${name}\` /v1/chat/completions answered HTTP ${res.status}: ${body}`, { code: relayedCode('model', answerCode(res.text), res.status) });
    }
    cookies = { ...cookies, ...res.cookies };
    const completion = res.json<Json>();
    const message = ((completion.choices as Json[] | undefined)?.[0]?.message ?? null) as Json | null;
    if (!message) throw new InstanceError(`model server \`${name}\` answered without choices[0].message`);
    const ints = (v: unknown) => (Array.isArray(v) ? (v as number[]) : []);
    return {
      content: typeof message.content === 'string' ? message.content : '',
      tokens: {
        prompt_token_ids: ints(message.prompt_token_ids),
        generation_token_ids: ints(message.generation_token_ids),
        generation_log_probs: ints(message.generation_log_probs),
      },
    };
  };
}

/** Counts the environments an opener has open (live and peak), for /sandbox_stats. */
function counted(state: State, open: OpenEnvironment): OpenEnvironment {
  return async (instance, signal) => {
    const env = await open(instance, signal);
    state.live.now += 1;
    state.live.max = Math.max(state.live.max, state.live.now);
    let closed = false;
    return {
      get repoDir() {
        return env.repoDir;
      },
      execute: (command, timeoutS) => env.execute(command, timeoutS),
      close: async () => {
        if (!closed) {
          closed = true;
          state.live.now -= 1;
        }
        await env.close();
      },
    };
  };
}

/** The container engine runs here; else the server does not start, saying what to install. */
async function checkEngine(engine: string, env: string): Promise<void> {
  const r = await runHost([engine, '--version'], { timeoutMs: 30_000 });
  if (r.code !== 0) {
    throw new InstanceError(`env ${env} needs the container engine '${engine}', which ${r.spawnError ? 'is not installed' : `does not run (${r.output.trim().slice(-300)})`} on this machine: install it (apt-get install podman, or Docker) or set container.engine`);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function runRow(body: Json & { responses_create_params: Json }, config: MiniSweAgentConfig, state: State, client: ServerClient, globalConfig: Json, log: Logger, signal?: AbortSignal): Promise<Json> {
  for (const k of ['instance_id', 'subset'] as const) {
    if (typeof body[k] !== 'string' || !body[k]) throw new HttpError(422, `the row has no ${k} (a string): mini_swe_agent needs instance_id and subset on every row`);
  }
  const instanceId = body.instance_id as string;
  const subset = body.subset as string;
  const policyModel = String(globalConfig.policy_model_name ?? config.model_server.name);
  const rcp = body.responses_create_params;
  const temperature = orDefault(rcp.temperature as number | null | undefined, config.default_temperature);
  const topP = orDefault(rcp.top_p as number | null | undefined, config.default_top_p);
  const path = resultPath(config, subset, policyModel, instanceId);
  if (config.skip_if_exists && existsSync(path)) {
    log.info(`mini_swe_agent: ${instanceId} already has a result at ${path}; returning it (skip_if_exists)`);
    return JSON.parse(readFileSync(path, 'utf8')) as Json;
  }

  // The model gets the request's own sampling values when it sets them (0.0 included) and the
  // defaults otherwise; the row reports upstream's `or` values.
  const sendTemperature = typeof rcp.temperature === 'number' ? rcp.temperature : config.default_temperature;
  const sendTopP = typeof rcp.top_p === 'number' ? rcp.top_p : config.default_top_p;
  const initial: ChatMessage[] = Array.isArray(rcp.input)
    ? (rcp.input as Json[]).filter((m) => m && typeof m === 'object' && typeof m.role === 'string').map((m) => ({ role: m.role as ChatMessage['role'], content: contentText(m.content) }))
    : [];
  const options: RunnerOptions = {
    episode: { templates: state.templates, stepLimit: config.step_limit, stepTimeoutS: config.step_timeout, collapseLimit: config.collapse_limit, longOutputChars: config.long_output_chars },
    runGolden: config.run_golden,
    evalTimeoutS: config.eval_timeout,
    repoPathTemplate: config.repo_path_template,
    repoSpecs: config.repo_specs as RunnerOptions['repoSpecs'],
    memoryBytes: config.memory_limit_mb * 1024 * 1024,
    maxOutputBytes: config.max_output_bytes,
  };

  let messages: ChatMessage[] = [];
  let output: Json[] = [];
  let reward = 0;
  let metadata: Json = {};
  try {
    const instance = checkInstance(body);
    const result = await runInstance(counted(state, state.open(subset)), instance, modelCaller(client, config, policyModel, sendTemperature, sendTopP, signal), options, initial, signal);
    messages = result.messages;
    output = chatToResponseItems(messages.slice(2), result.replies);
    reward = isResolved(instanceId, result.evalResult) ? 1.0 : 0.0;
    metadata = { ...result.evalResult, exit_status: result.exitStatus };
  } catch (err) {
    // Nobody waits for this row (the client went away): no row, no result file.
    if (signal?.aborted) {
      log.info(`mini_swe_agent: ${instanceId} cancelled (the client closed the connection); its environment was removed`);
      throw err;
    }
    // Upstream scores any harness failure 0.0 with empty messages; the reason stays in the row.
    log.warn(`mini_swe_agent: ${instanceId} failed: ${describe(err)}`);
    const code = err instanceof NgError ? err.code : undefined;
    metadata = code === undefined ? { error: describe(err) } : { error: describe(err), error_code: code };
  }

  const responses_create_params = { ...fullCreateParamsDump(rcp), input: messages.slice(0, 2) };
  const row: Json = {
    responses_create_params,
    reward,
    response: episodeResponse(policyModel, temperature, topP, output),
    instance_id: instanceId,
    metadata,
  };
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, JSON.stringify(row));
  } catch (err) {
    log.warn(`mini_swe_agent: could not write ${path}: ${describe(err)}`);
  }
  return row;
}

export const server = defineAgent({
  className: 'MiniSWEAgent',
  configSchema: MiniSweAgentConfigSchema,
  setup: async ({ config, log }): Promise<State> => {
    const templates = loadTemplates(config.templates);
    const episodes = new SlotPool(config.concurrency, Number.POSITIVE_INFINITY);
    const live = { now: 0, max: 0 };
    const options = { repoPathTemplate: config.repo_path_template, memoryBytes: config.memory_limit_mb * 1024 * 1024, maxOutputBytes: config.max_output_bytes, evalTimeoutS: config.eval_timeout };
    if (config.env === 'local') {
      const sandbox = await Sandbox.create({ ...sandboxOptionsFromConfig(config, log), poolSize: config.concurrency, name: 'ng-mini-swe' });
      const open = localEnvironment(sandbox, options);
      return { sandbox, episodes, templates, open: () => open, live };
    }
    const imageTemplates = { ...DEFAULT_IMAGE_TEMPLATES, ...config.container.image_templates };
    checkTemplates(imageTemplates, 'container.image_templates');
    const image = (instance: SweInstance, subset: string) => imageName(instance, subset, imageTemplates);
    if (config.env === 'docker' || config.env === 'podman') {
      const c = config.container;
      const settings: ContainerEnvSettings = {
        engine: c.engine ?? config.env,
        runtime: c.runtime,
        pull: c.pull,
        pullTimeoutS: c.pull_timeout,
        startTimeoutS: c.start_timeout,
        workdir: c.workdir,
        network: c.network,
        runArgs: c.run_args,
        memoryBytes: options.memoryBytes,
        pidsLimit: c.pids_limit,
        maxOutputBytes: config.max_output_bytes,
        ownerPid: process.pid,
      };
      await checkEngine(settings.engine, config.env);
      const stale = await removeStaleContainers({ engine: settings.engine, runtime: settings.runtime ?? undefined });
      if (stale) log.info(`mini_swe_agent: removed ${stale} container(s) left by servers that are gone`);
      log.info(`mini_swe_agent: episodes run in ${settings.engine} containers of each instance's image (repository at ${settings.workdir}, pull: ${settings.pull})`);
      return { sandbox: null, episodes, templates, live, open: (subset) => (instance, signal) => ContainerEnvironment.start(settings, image(instance, subset), instance.instance_id, COMMAND_ENV, signal) };
    }
    const s = config.singularity;
    if (!config.cache_dir_template) throw new InstanceError(`env ${config.env} needs cache_dir_template: where each instance's .sif image is (or is pulled to), e.g. /data/sif/swebench_sweb.eval.x86_64.{instance_id}.sif`);
    checkTemplates({ cache_dir_template: config.cache_dir_template.replaceAll('{instance_id}', '') }, 'cache_dir_template');
    const settings: ApptainerSettings = {
      executable: s.executable ?? config.env,
      cacheDirTemplate: config.cache_dir_template,
      pull: s.pull,
      pullTimeoutS: s.pull_timeout,
      startTimeoutS: s.start_timeout,
      workdir: s.workdir,
      startArgs: s.start_args,
      binds: s.binds,
      maxOutputBytes: config.max_output_bytes,
      ownerPid: process.pid,
    };
    await checkApptainer(settings.executable);
    const stale = await removeStaleInstances(settings.executable);
    if (stale) log.info(`mini_swe_agent: stopped ${stale} ${settings.executable} instance(s) left by servers that are gone`);
    return { sandbox: null, episodes, templates, live, open: (subset) => (instance, signal) => ApptainerEnvironment.start(settings, image(instance, subset), instance.instance_id, COMMAND_ENV, signal) };
  },
  close: async ({ state }) => {
    await state.sandbox?.close();
  },
  routes: (app, ctx) => {
    // Live and peak numbers of episode sandboxes (sessions) and episodes, for monitoring.
    app.get('/sandbox_stats', async () => {
      const s = ctx.state.sandbox?.stats();
      const e = ctx.state.episodes.stats();
      const live = ctx.state.live;
      return {
        live_sandboxes: s ? s.liveSessions : live.now,
        max_live_sandboxes: s ? s.maxLive : live.max,
        live_environments: live.now,
        max_live_environments: live.max,
        running_episodes: e.running,
        queued_episodes: e.queued,
        max_running_episodes: e.maxRunning,
        concurrency: ctx.config.concurrency,
      };
    });
  },
  responses: {
    body: ResponseCreateParamsSchema,
    handler: () => {
      throw new HttpError(501, 'mini_swe_agent has no /v1/responses: an episode needs a SWE instance row (instance_id, repo, base_commit, problem_statement, test_patch, ...); POST the row to /run instead');
    },
  },
  run: {
    body: MiniSweRunRequestSchema,
    handler: async (body, ctx) => {
      const signal = ctx.signal;
      return ctx.state.episodes.use(async () => {
        // A client that left while the row waited for a slot gets nothing started.
        signal.throwIfAborted();
        return runRow(body as Json & { responses_create_params: Json }, ctx.config, ctx.state, ctx.client, ctx.globalConfig as Json, ctx.log, signal);
      });
    },
  },
});

startIfMain(import.meta.url, server);
