/**
 * user_simulation_agent: a second model server plays the user. `/run` is one rollout: seed the
 * resources session, converse (user model ↔ policy with its tool loop) until the user stops, a
 * turn limit or an ending tool, then `/verify` with `termination_reason` added to the row.
 * `/v1/responses` runs the conversation alone, the user's instructions in `metadata.user_instructions`.
 */
import { z } from 'zod';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '@nemo-gym/core/config';
import { fullCreateParamsDump, ResponseCreateParamsSchema, responseEvents } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, defineAgent, offersServerTools, seedRollout, SseReply, startIfMain, verifyAnswer, verifyRollout } from '@nemo-gym/core/server';
import { runEpisode } from './src/episode.js';
import { UserInstructionsError } from './src/errors.js';
import { DEFAULT_STOP_SIGNALS, DEFAULT_USER_SYSTEM_PROMPT, promptSignals, rowUserPrompt, userSystemPrompt } from './src/prompt.js';

const seconds = z.number().positive();

export const UserSimulationAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  model_server: ModelServerRefSchema,
  user_model_server: ModelServerRefSchema,
  /** The user model's system prompt; `{instructions}` is the row's, `{stop}` `{transfer}` `{out_of_scope}` the signals. A row's own `user_system_prompt` wins. */
  user_system_prompt: z.string().min(1).default(DEFAULT_USER_SYSTEM_PROMPT),
  /** Parameters added to every user-model request (temperature, max_output_tokens, model, …). */
  user_responses_create_params: z.record(z.string(), z.unknown()).default({}),
  stop_signals: z.array(z.string().min(1)).min(1).default([...DEFAULT_STOP_SIGNALS]),
  /** Tools whose call ends the conversation once its output is in (termination `agent_stop`). */
  end_tools: z.array(z.string().min(1)).default([]),
  /** User turns at most. */
  max_turns: z.number().int().positive().default(30),
  /** Policy model calls per policy turn at most (the tool loop's max_steps). */
  max_steps: z.number().int().positive().nullable().optional(),
  /** Seconds each policy model call may take (null: the client's http timeouts). */
  policy_timeout_s: seconds.nullable().default(600),
  user_timeout_s: seconds.default(300),
  tool_timeout_s: seconds.nullable().default(300),
  /** A row without tools: the policy is offered the resources server's (GET /ng_tools); unset: the global setting of that name. */
  offer_server_tools: z.boolean().nullable().optional(),
});
export type UserSimulationAgentConfig = z.output<typeof UserSimulationAgentConfigSchema>;

export const server = defineAgent({
  className: 'UserSimulationAgent',
  configSchema: UserSimulationAgentConfigSchema,
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      const { stream, metadata, ...rest } = body;
      const { user_instructions: instructions = '', ...ownMetadata } = metadata ?? {};
      if (instructions.trim() === '') throw new UserInstructionsError('/v1/responses needs the simulated user\'s instructions in `metadata.user_instructions`');
      // The user's instructions are for the user model only: the policy never sees them.
      const params = metadata && Object.keys(ownMetadata).length > 0 ? { ...rest, metadata: ownMetadata } : rest;
      const prompt = userSystemPrompt(ctx.config.user_system_prompt, instructions, promptSignals(ctx.config.stop_signals));
      const episode = await runEpisode(params, prompt, ctx.config, ctx.client, ctx.cookies, ctx.signal, { offerServerTools: offersServerTools(ctx.config, ctx.globalConfig) });
      ctx.setCookies({ ...episode.resourcesCookies, ...episode.modelCookies });
      return stream ? new SseReply(responseEvents(episode.response)) : episode.response;
    },
  },
  run: {
    body: BaseRunRequestSchema.loose(),
    handler: async (body, ctx) => {
      const { name: resources } = ctx.config.resources_server;
      const prompt = rowUserPrompt(body, ctx.config.user_system_prompt, ctx.config.stop_signals);
      if (prompt === null) throw new UserInstructionsError('the row gives the simulated user no instructions: add `user_instructions` (text), `user_scenario` or `user_system_prompt`');
      const row = { ...body, responses_create_params: fullCreateParamsDump(body.responses_create_params) };
      const rowText = JSON.stringify(row);
      const signal = ctx.signal;
      const cookies = await seedRollout(ctx.client, resources, rowText, ctx.cookies, signal);
      const { stream: _stream, ...params } = body.responses_create_params;
      const episode = await runEpisode(params, prompt, ctx.config, ctx.client, cookies, signal, { offerServerTools: offersServerTools(ctx.config, ctx.globalConfig) });
      // tau2's evaluator reads `termination_reason`; the conversation's counts ride along.
      const added = { termination_reason: episode.termination_reason, user_simulation: episode.stats };
      const verify = await verifyRollout(ctx.client, resources, row, rowText, episode.response, episode.resourcesCookies, signal, added);
      ctx.setCookies({ ...episode.resourcesCookies, ...episode.modelCookies });
      return verifyAnswer(verify, added);
    },
  },
});

startIfMain(import.meta.url, server);
