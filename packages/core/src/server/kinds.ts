/**
 * The three server kinds of NeMo Gym, on top of defineServer:
 *   resources server: POST /seed_session, POST /verify, POST /<tool> per tool
 *                     (+ POST /reset, /step, /close for a Gymnasium-style environment, see gymnasium.ts);
 *   model server:     POST /v1/responses, POST /v1/chat/completions, POST /v1/messages (Anthropic, on the Responses handler);
 *   agent:            POST /v1/responses, POST /run.
 */
import { z } from 'zod';
import { ConfigError, HttpError, ServerDefinitionError } from '../errors.js';
import { RawJson } from '../http/raw-json.js';
import { fullCreateParamsDump, fullResponseDump, ResponseCreateParamsSchema, ResponseSchema, type ResponseCreateParams } from '../openai/schemas.js';
import { jsonSchemaOf, toolDefinitions, TOOLS_PATH, VERIFY_SCHEMA_PATH, type ResourcesServerDescription } from './describe.js';
import { isPromiseLike } from './fast-path.js';
import { gymnasiumRoutes, noVerifyRoute, type GymnasiumEnv } from './gymnasium.js';
import { messagesRoutes, type CountTokens } from './messages-route.js';
import { defineServer, type HandlerContext, type Route, type ServerDefinition, type ServerDefinitionInput, type SetupContext } from './define.js';

export const BaseRunRequestSchema = z.object({ responses_create_params: ResponseCreateParamsSchema });
export const BaseVerifyRequestSchema = BaseRunRequestSchema.extend({ response: ResponseSchema });
export const BaseVerifyResponseSchema = BaseVerifyRequestSchema.extend({ reward: z.number() });
export const BaseSeedSessionRequestSchema = z.object({});
export type BaseRunRequest = z.infer<typeof BaseRunRequestSchema>;
export type BaseVerifyRequest = z.infer<typeof BaseVerifyRequestSchema>;
export type BaseVerifyResponse = z.infer<typeof BaseVerifyResponseSchema>;

/**
 * `POST /verify_group` (docs/group-rewards.md): the finished rollouts of one task, each the verify
 * answer of one rollout (its own `/verify` reward included when the server has one) with the
 * `member_id` the collector gave it.
 */
export const VerifyGroupMemberSchema = BaseVerifyRequestSchema.extend({ member_id: z.string().min(1), reward: z.number().nullable().optional() }).loose();
export const VerifyGroupRequestSchema = z
  .object({
    task_index: z.number().int().nullable().optional(),
    num_repeats: z.number().int().nullable().optional(),
    members: z.array(VerifyGroupMemberSchema).min(1),
  })
  .loose();
export type VerifyGroupMember = z.output<typeof VerifyGroupMemberSchema>;
export type VerifyGroupRequest = z.output<typeof VerifyGroupRequestSchema>;
/** One member's score: its id, its reward, and anything else to keep beside it (e.g. the judge's reason). */
export interface VerifyGroupScore {
  member_id: string;
  reward: number;
  [key: string]: unknown;
}
/** The answer of `/verify_group`: one score per member (any order), and fields about the whole group. */
export interface VerifyGroupResult {
  members: VerifyGroupScore[];
  [key: string]: unknown;
}

/** `<task>-<repeat>` ids in task then repeat order; other ids after them, as strings. */
function compareMemberIds(a: string, b: string): number {
  const pa = /^(\d+)-(\d+)$/.exec(a);
  const pb = /^(\d+)-(\d+)$/.exec(b);
  if (pa && pb) return Number(pa[1]) - Number(pb[1]) || Number(pa[2]) - Number(pb[2]);
  if (pa || pb) return pa ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The /verify_group route around a server's `verifyGroup`: the members reach it in member id
 * order whatever order they were sent in (so the order of arrival never changes a reward), and its
 * answer must score every member once with a finite reward (a server bug otherwise, answered 500).
 */
function verifyGroupRoute<C, S>(className: string, verifyGroup: (group: VerifyGroupRequest, ctx: HandlerContext<C, S>) => VerifyGroupResult | Promise<VerifyGroupResult>): AnyRoute<C, S> {
  return {
    body: VerifyGroupRequestSchema,
    handler: async (body: VerifyGroupRequest, ctx: HandlerContext<C, S>) => {
      const ids = new Set<string>();
      for (const m of body.members) {
        if (ids.has(m.member_id)) throw new HttpError(400, `member_id ${JSON.stringify(m.member_id)} appears twice in the group; each member needs its own id`);
        ids.add(m.member_id);
      }
      const members = [...body.members].sort((a, b) => compareMemberIds(a.member_id, b.member_id));
      const out = await verifyGroup({ ...body, members }, ctx);
      const scored = new Map<string, VerifyGroupScore>();
      for (const m of Array.isArray(out?.members) ? out.members : []) {
        if (ids.has(m.member_id) && !scored.has(m.member_id) && typeof m.reward === 'number' && Number.isFinite(m.reward)) scored.set(m.member_id, m);
      }
      if (scored.size !== ids.size) {
        throw new HttpError(500, `${className}.verifyGroup scored ${scored.size} of the ${ids.size} members with a finite reward; it must return one {member_id, reward} per member`);
      }
      return { ...out, members: body.members.map((m) => scored.get(m.member_id)!) };
    },
  };
}

type AnyRoute<C, S> = Route<C, S, any>;

/**
 * Verify answers carry the full request and response dumps (every field, nulls included),
 * as upstream's pydantic response models serialize them; rollout files depend on that shape.
 */
export function fullVerifyDump(out: unknown): unknown {
  if (out === null || typeof out !== 'object' || out instanceof RawJson || Array.isArray(out)) return out;
  const o = { ...(out as Record<string, unknown>) };
  if (o.responses_create_params && typeof o.responses_create_params === 'object') {
    o.responses_create_params = fullCreateParamsDump(o.responses_create_params as Record<string, unknown>);
  }
  if (o.response && typeof o.response === 'object') o.response = fullResponseDump(o.response as Record<string, unknown>);
  return o;
}

export interface ResourcesServerInput<CS extends z.ZodType, S> extends ServerDefinitionInput<CS, S> {
  tools?: Record<string, AnyRoute<z.output<CS>, S>>;
  seedSession?: AnyRoute<z.output<CS>, S>;
  /** Required unless the server is a Gymnasium-style environment (`gymnasium`), which scores in /step. */
  verify?: AnyRoute<z.output<CS>, S>;
  /** A Gymnasium-style environment: adds POST /reset, /step and /close (see gymnasium.ts). */
  gymnasium?: GymnasiumEnv<z.output<CS>, S, unknown>;
  /**
   * Scores the rollouts of one task together: adds POST /verify_group (docs/group-rewards.md).
   * Collectors use it for the instances whose config says `verify_group: true`.
   */
  verifyGroup?: (group: VerifyGroupRequest, ctx: HandlerContext<z.output<CS>, S>) => VerifyGroupResult | Promise<VerifyGroupResult>;
}

export function defineResourcesServer<CS extends z.ZodType, S = undefined>(input: ResourcesServerInput<CS, S>): ServerDefinition<z.output<CS>, S> {
  if (!input.verify && !input.gymnasium) throw new ServerDefinitionError(`${input.className}: a resources server needs \`verify\` (or \`gymnasium\`, whose /step scores)`);
  let description: ResourcesServerDescription | undefined;
  const describe = (): ResourcesServerDescription =>
    (description ??= { tools: toolDefinitions(input.tools ?? {}), verifyRequestSchema: input.verify ? jsonSchemaOf(input.verify.body) : null });
  const withDescription: ResourcesServerInput<CS, S> = {
    ...input,
    routes: async (app, ctx) => {
      app.get(TOOLS_PATH, async () => describe().tools);
      if (input.verify) app.get(VERIFY_SCHEMA_PATH, async () => describe().verifyRequestSchema);
      if (input.routes) await input.routes(app, ctx);
    },
  };
  const definition = defineServer('resources_servers', withDescription, (ctx) => {
    const verify = input.verify ?? (noVerifyRoute(input.className) as AnyRoute<z.output<CS>, S>);
    const routes = [
      {
        path: '/seed_session',
        route: (input.seedSession ?? { body: BaseSeedSessionRequestSchema.loose(), handler: () => ({}) }) as AnyRoute<unknown, unknown>,
      },
      {
        path: '/verify',
        route: {
          body: verify.body,
          // A synchronous verify is answered without a promise.
          handler: (body: unknown, ctx: never) => {
            const out = verify.handler(body, ctx);
            return isPromiseLike(out) ? Promise.resolve(out).then(fullVerifyDump) : fullVerifyDump(out);
          },
        } as AnyRoute<unknown, unknown>,
      },
    ];
    const declared = (ctx.config as { verify_group?: unknown }).verify_group;
    if (declared !== undefined && declared !== null && typeof declared !== 'boolean') {
      throw new ConfigError(`${input.className}: verify_group must be true or false, got ${JSON.stringify(declared)}`);
    }
    if (declared === true && !input.verifyGroup) {
      throw new ConfigError(`${input.className}: the config says verify_group: true, but this server has no group verify (/verify_group); remove verify_group from its config`);
    }
    if (input.verifyGroup) routes.push({ path: '/verify_group', route: verifyGroupRoute(input.className, input.verifyGroup) as AnyRoute<unknown, unknown> });
    for (const [name, tool] of Object.entries(input.tools ?? {})) {
      if (name === 'seed_session' || name === 'verify' || name === 'verify_group') throw new ServerDefinitionError(`${input.className}: a tool cannot be named ${name} (that route is built in); rename the tool`);
      if (input.gymnasium && (name === 'reset' || name === 'step' || name === 'close')) throw new ServerDefinitionError(`${input.className}: a tool cannot be named ${name} on a Gymnasium-style server (that route is built in); rename the tool`);
      routes.push({ path: `/${name}`, route: tool as AnyRoute<unknown, unknown> });
    }
    if (input.gymnasium) routes.push(...(gymnasiumRoutes(input.className, input.gymnasium, ctx) as typeof routes));
    return routes;
  });
  return { ...definition, describe };
}

export interface ModelServerInput<CS extends z.ZodType, S> extends ServerDefinitionInput<CS, S> {
  responses: AnyRoute<z.output<CS>, S>;
  chatCompletions: AnyRoute<z.output<CS>, S>;
  /**
   * `GET /v1/models`: the backend's model list, fetched with one cheap request (see
   * listBackendModels). Collections call it before their first rollout to find a dead backend or a
   * refused key at once. A server without it answers 404 there and its backend is not checked.
   */
  models?: (ctx: SetupContext<z.output<CS>> & { state: S }) => unknown;
  /** Input tokens of a Responses request, for `POST /v1/messages/count_tokens` (without it that route answers 404). */
  countTokens?: (params: ResponseCreateParams, ctx: HandlerContext<z.output<CS>, S>) => number | Promise<number>;
}

export function defineModelServer<CS extends z.ZodType, S = undefined>(input: ModelServerInput<CS, S>): ServerDefinition<z.output<CS>, S> {
  const models = input.models;
  const withModels: ServerDefinitionInput<CS, S> = models
    ? {
        ...input,
        routes: async (app, ctx) => {
          app.get('/v1/models', async (_request, reply) => {
            const out = await models(ctx);
            const raw = out instanceof RawJson ? out : new RawJson(JSON.stringify(out ?? null));
            return reply.status(raw.status).type('application/json').send(raw.text);
          });
          if (input.routes) await input.routes(app, ctx);
        },
      }
    : input;
  return defineServer('responses_api_models', withModels, (ctx) => [
    { path: '/v1/responses', route: input.responses as AnyRoute<unknown, unknown> },
    { path: '/v1/chat/completions', route: input.chatCompletions as AnyRoute<unknown, unknown> },
    ...messagesRoutes(input.responses as AnyRoute<unknown, unknown>, ctx.log, input.countTokens as CountTokens | undefined),
  ]);
}

export interface AgentInput<CS extends z.ZodType, S> extends ServerDefinitionInput<CS, S> {
  responses: AnyRoute<z.output<CS>, S>;
  run: AnyRoute<z.output<CS>, S>;
}

export function defineAgent<CS extends z.ZodType, S = undefined>(input: AgentInput<CS, S>): ServerDefinition<z.output<CS>, S> {
  return defineServer('responses_api_agents', input, () => [
    { path: '/v1/responses', route: input.responses as AnyRoute<unknown, unknown> },
    { path: '/run', route: input.run as AnyRoute<unknown, unknown> },
  ]);
}
