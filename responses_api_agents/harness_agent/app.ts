/**
 * harness_agent: runs an external agent harness — Codex CLI, Claude Code, OpenCode, or any
 * command that reads OPENAI_BASE_URL — as it is, in @nemo-gym/sandbox. `/run` takes a task row,
 * prepares a work folder (the row's repository files / folder / tarball and its instruction),
 * points the harness at the policy model with a per-rollout dummy key, reads its answer and the
 * work folder's diff, builds the response and answers the resources server's `/verify`.
 * `/v1/responses` is not offered (a rollout needs a row and a work folder, not just a prompt).
 */
import { dirname } from 'node:path';
import { z } from 'zod';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '@nemo-gym/core/config';
import { assembleResponse, fetchTrajectory, modelBaseUrl, releaseCapture, rolloutApiKey, rolloutIdentity, trajectorySummary, type RolloutIdentity } from '@nemo-gym/core/capture';
import { HttpError, RolloutIdError } from '@nemo-gym/core/errors';
import { fullCreateParamsDump, ResponseCreateParamsSchema } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, defineAgent, RawJson, startIfMain } from '@nemo-gym/core/server';
import { Sandbox, SlotPool, sandboxConfigShape, sandboxOptionsFromConfig } from '@nemo-gym/sandbox';
import { HarnessError, runFailure, runHarness, type HarnessRun, type HarnessRunOptions, type NetworkMode } from './src/harness.js';
import { PINNED_VERSIONS, PRESETS, type PresetName } from './src/presets.js';
import { instructionOf, WorkspaceSchema } from './src/workspace.js';

export const HarnessAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  model_server: ModelServerRefSchema,
  /** Which harness: `codex`, `claude_code`, `opencode`, or `generic` (any `command`). */
  preset: z.enum(['codex', 'claude_code', 'opencode', 'generic']),
  /** The program to run instead of the preset's pinned binary (absolute path); required for `generic`. */
  command: z.string().min(1).nullable().default(null),
  /** Arguments added before the instruction (`generic`: the whole argument list; `{instruction}` is replaced). */
  args: z.array(z.string()).default([]),
  /** Model name the harness asks for (the model server serves its own model whatever the name). */
  model: z.string().min(1).default('policy'),
  /** Host folders the harness may read besides the system and its own binary (scripts, tools). */
  readable_paths: z.array(z.string()).default([]),
  /** Variables added to the harness's environment. */
  env: z.record(z.string(), z.string()).default({}),
  /** Wall-clock limit of one harness run, seconds; the whole process tree is killed at it. */
  timeout_s: z.coerce.number().positive().default(900),
  /** Limit of the work folder's set-up and of reading the diff, seconds. */
  setup_timeout_s: z.coerce.number().positive().default(120),
  /** Bytes kept of the harness's stdout and of its stderr (more stops it), and the largest diff. */
  max_output_bytes: z.coerce.number().int().min(4096).default(16 * 1024 * 1024),
  /** Address-space limit per process, MiB; 0 = none (the default: Bun- and V8-based CLIs reserve
   * far more address space than they use, so RLIMIT_AS stops them at start-up). */
  memory_limit_mb: z.coerce.number().int().min(0).default(0),
  /** Harness rollouts at once (more wait). */
  concurrency: z.coerce.number().int().min(1).default(16),
  /** Where relative `workspace.dir` / `workspace.tarball` paths of a row are read from. */
  repo_root: z.string().default('.'),
  /** A model endpoint outside ng-run (`http://host:port`, no `/v1`) used instead of model_server's
   * address (no per-rollout routes, no capture). The harness still gets only the per-rollout dummy key. */
  model_base_url: z.string().url().nullable().default(null),
  /** Give the harness `/ng-rollout/<rollout_id>/v1` on the model server (every model server serves
   * them); off: `<model server>/v1`. Not used with `model_base_url`. */
  per_rollout_routes: z.boolean().default(true),
  /** Build the response from the model server's token capture (`GET /ng-rollout/<id>/trajectory`).
   * null (default): on when the harness talks to `model_server` through per-rollout routes, off
   * with `model_base_url` (an endpoint outside ng-run has no capture). */
  capture: z.boolean().nullable().default(null),
  ...sandboxConfigShape('auto'),
});
export type HarnessAgentConfig = z.output<typeof HarnessAgentConfigSchema>;

type Json = Record<string, unknown>;

interface State {
  /** Build responses from the model server's token capture. */
  capture: boolean;
  sandbox: Sandbox;
  rollouts: SlotPool;
  options: HarnessRunOptions;
}

/** The program of a config: the configured command, else the preset's pinned binary. */
export function resolveProgram(config: Pick<HarnessAgentConfig, 'preset' | 'command'>): { program: string; readablePaths: string[] } {
  if (config.command) return { program: config.command, readablePaths: config.command.startsWith('/') ? [dirname(config.command)] : [] };
  const preset = PRESETS[config.preset as PresetName];
  const binary = preset.binary();
  if (!binary) {
    const pkg = config.preset === 'codex' ? `@openai/codex@${PINNED_VERSIONS.codex}` : config.preset === 'claude_code' ? `@anthropic-ai/claude-code@${PINNED_VERSIONS.claude_code}` : config.preset === 'opencode' ? `opencode-ai@${PINNED_VERSIONS.opencode}` : null;
    throw new HarnessError(
      pkg
        ? `preset ${config.preset}: the ${pkg} binary for ${process.platform}-${process.arch} is not installed (run \`pnpm install\` at the repository root; it is a devDependency of responses_api_agents/harness_agent), or set \`command\` to the CLI's path`
        : 'preset generic needs `command`: the program to run (it gets OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL and NG_INSTRUCTION)',
    );
  }
  // The whole platform package (Codex keeps its ripgrep beside the binary).
  return { program: binary, readablePaths: [dirname(dirname(binary))] };
}

export const server = defineAgent({
  className: 'HarnessAgent',
  configSchema: HarnessAgentConfigSchema,
  setup: async ({ config, log }): Promise<State> => {
    if (config.capture === true && (config.model_base_url !== null || !config.per_rollout_routes)) {
      throw new HarnessError('capture: true needs the harness to reach `model_server` through per-rollout routes: set `per_rollout_routes: true` and no `model_base_url` (or leave `capture` unset)');
    }
    const { program, readablePaths } = resolveProgram(config);
    const sandbox = await Sandbox.create({ ...sandboxOptionsFromConfig(config, log), poolSize: config.concurrency, name: 'ng-harness' });
    const network: NetworkMode = sandbox.provider === 'local' ? 'host' : 'model_only';
    if (network === 'host') log.warn('harness_agent: the local sandbox provider shares the host\'s network with the harness (bubblewrap or a container confine it to the model URL)');
    log.info(`harness_agent: preset ${config.preset} (${program}), sandbox ${sandbox.provider}, network ${network}`);
    const capture = config.capture ?? (config.model_base_url === null && config.per_rollout_routes);
    log.info(`harness_agent: responses from ${capture ? 'the model server\'s token capture' : 'the harness\'s own events (no token ids)'}`);
    return {
      capture,
      sandbox,
      rollouts: new SlotPool(config.concurrency, Number.POSITIVE_INFINITY),
      options: {
        preset: PRESETS[config.preset],
        program,
        readablePaths: [...readablePaths, ...config.readable_paths],
        model: config.model,
        extraArgs: config.args,
        env: config.env,
        timeoutS: config.timeout_s,
        setupTimeoutS: config.setup_timeout_s,
        maxOutputBytes: config.max_output_bytes,
        memoryBytes: config.memory_limit_mb * 1024 * 1024,
        network,
        repoRoot: config.repo_root,
      },
    };
  },
  close: async ({ state }) => {
    await state.sandbox.close();
  },
  routes: (app, ctx) => {
    app.get('/sandbox_stats', async () => {
      const s = ctx.state.sandbox.stats();
      const r = ctx.state.rollouts.stats();
      return { live_sandboxes: s.liveSessions, max_live_sandboxes: s.maxLive, live_process_groups: s.liveProcessGroups, running_rollouts: r.running, queued_rollouts: r.queued, concurrency: ctx.config.concurrency };
    });
  },
  responses: {
    body: ResponseCreateParamsSchema,
    handler: () => {
      throw new HttpError(501, 'harness_agent has no /v1/responses: a harness rollout needs a task row (instruction, workspace); POST the row to /run instead');
    },
  },
  run: {
    body: BaseRunRequestSchema.loose(),
    handler: async (body, ctx) => {
      const row = { ...body, responses_create_params: fullCreateParamsDump(body.responses_create_params) } as Json;
      let identity: RolloutIdentity;
      try {
        identity = rolloutIdentity(row);
      } catch (err) {
        if (err instanceof RolloutIdError) throw new HttpError(422, err.message, undefined, RolloutIdError.code);
        throw err;
      }
      const parsed = WorkspaceSchema.safeParse(row.workspace ?? {});
      if (!parsed.success) throw new HttpError(422, `workspace: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      const instruction = instructionOf(row);
      const { resources_server: resources, model_server: model } = ctx.config;
      const signal = ctx.signal;

      const seed = await ctx.client.post(resources.name, '/seed_session', row, { cookies: ctx.cookies, signal });
      if (!seed.ok) throw seed.error();
      const cookies = { ...ctx.cookies, ...seed.cookies };

      const external = ctx.config.model_base_url;
      // One address for the harness and the trajectory request: the capture lives in that process.
      const modelUrl = external ?? ctx.client.baseUrl(model.name);
      const baseUrl = modelBaseUrl(modelUrl, identity.id, { perRolloutRoutes: !external && ctx.config.per_rollout_routes });
      const capture = ctx.state.capture;
      let run: HarnessRun;
      try {
        run = await ctx.state.rollouts.use(async () => {
          signal.throwIfAborted();
          return runHarness(ctx.state.sandbox, ctx.state.options, { workspace: parsed.data, instruction, baseUrl, apiKey: rolloutApiKey('ng-harness') }, signal);
        });
      } catch (err) {
        if (capture) await releaseCapture(modelUrl, identity.id);
        throw err;
      }
      const failure = runFailure(run, ctx.config.timeout_s, ctx.config.max_output_bytes);
      // A recorded failure (never a reward): the answer carries the code, the rollout and why.
      // The answer's own code classes the failure for the collector: a harness killed at its limit is a timeout.
      if (failure) {
        if (capture) await releaseCapture(modelUrl, identity.id);
        const detail = { code: HarnessError.code, message: `rollout ${identity.id} (${ctx.config.preset}): ${failure}`, rollout_id: identity.id, preset: ctx.config.preset, timed_out: run.timedOut, exit_code: run.exitCode };
        throw new HttpError(500, detail, undefined, run.timedOut ? 'NG_ERR_TIMEOUT' : HarnessError.code);
      }

      const trajectory = capture ? await fetchTrajectory(ctx.client, modelUrl, identity.id, signal) : null;
      const assembled = assembleResponse({ rolloutId: identity.id, model: ctx.config.model, transcript: run.transcript, transcriptSource: 'harness_events', trajectory });
      const response = assembled.response;
      const harness = {
        preset: ctx.config.preset,
        rollout_id: identity.id,
        exit_code: run.exitCode,
        duration_ms: run.durationMs,
        final_text: run.transcript.finalText,
        patch: run.patch,
        model_calls: run.modelCalls,
        errors: run.transcript.errors,
        stderr_tail: run.stderr.length > 2000 ? `…${run.stderr.slice(-2000)}` : run.stderr,
        trajectory: trajectorySummary(trajectory),
      };
      const verify = await ctx.client.post(resources.name, '/verify', { ...row, response, harness }, { cookies, signal });
      if (!verify.ok) throw verify.error();
      ctx.setCookies(verify.cookies);
      // A sample the capture cannot vouch for stays in the output, flagged (never silently trained).
      if (assembled.maskSample) return { ...verify.json<Json>(), mask_sample: true, failure_reason: assembled.failureReason };
      const type = verify.headers['content-type'];
      if (typeof type === 'string' && type.startsWith('application/json')) return new RawJson(verify.text);
      return verify.json();
    },
  },
});

startIfMain(import.meta.url, server);
