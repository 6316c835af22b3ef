/**
 * replay_model: a model server that answers `/v1/responses` from recorded rollouts. It makes
 * the quickstart work without an API key, and re-scoring recorded rollouts with a changed
 * verifier one command: replay them through the agent and the (new) resources server.
 */
import { isAbsolute, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { repoRoot } from '@nemo-gym/core/config';
import { HttpError } from '@nemo-gym/core/errors';
import { ReplayRecordingsError } from './src/errors.js';
import { ResponseCreateParamsSchema, responseEvents } from '@nemo-gym/core/openai';
import { defineModelServer, ModelServerConfigSchema, SseReply, startIfMain } from '@nemo-gym/core/server';
import { ReplayIndex } from './src/index.js';

const ConfigSchema = ModelServerConfigSchema.extend({
  /** Recorded rollouts (JSONL, paths relative to the repo root). */
  recordings_jsonl_fpaths: z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v])),
});

export const server = defineModelServer({
  className: 'ReplayModel',
  configSchema: ConfigSchema,
  setup: async ({ config, log }) => {
    const index = new ReplayIndex();
    for (const p of config.recordings_jsonl_fpaths) {
      const abs = isAbsolute(p) ? p : join(repoRoot(), p);
      try {
        await index.addFile(abs);
      } catch (err) {
        throw new ReplayRecordingsError(`replay_model could not read recordings_jsonl_fpaths entry ${abs}: ${(err as Error).message}`, { cause: err });
      }
    }
    log.info(`replaying ${index.conversations} recorded conversation(s), ${index.size} model turn(s)`);
    return index;
  },
  // No backend: the recordings are the model.
  models: () => ({ object: 'list', data: [{ id: 'replay_model', object: 'model', owned_by: 'nemo-gym' }] }),
  responses: {
    body: ResponseCreateParamsSchema,
    handler: (body, ctx) => {
      const rec = ctx.state.lookup(body.input);
      if (!rec) {
        const items = Array.isArray(body.input) ? body.input : [body.input];
        const last = JSON.stringify(items[items.length - 1] ?? null).slice(0, 300);
        throw new HttpError(
          404,
          `replay_model: no recorded conversation matches this request (${ctx.state.conversations} recorded, in ${ctx.config.recordings_jsonl_fpaths.join(', ')}). ` +
            `The request has ${items.length} input item(s); the last one is ${last}. Record this task with a real model first, or point recordings_jsonl_fpaths at a file that has it.`,
        );
      }
      const response = {
        ...rec.response,
        id: `resp_replay_${randomUUID().replace(/-/g, '')}`,
        output: rec.output,
        tools: body.tools ?? rec.response.tools ?? [],
        parallel_tool_calls: body.parallel_tool_calls ?? rec.response.parallel_tool_calls ?? true,
        tool_choice: body.tool_choice ?? rec.response.tool_choice ?? 'auto',
      };
      // `stream: true`: the recorded answer as a Responses event stream.
      return body.stream ? new SseReply(responseEvents(response as Record<string, unknown>)) : response;
    },
  },
  chatCompletions: {
    body: z.object({}).loose(),
    handler: () => {
      throw new HttpError(501, 'replay_model answers only /v1/responses; recordings hold Responses API turns.');
    },
  },
});

startIfMain(import.meta.url, server);
