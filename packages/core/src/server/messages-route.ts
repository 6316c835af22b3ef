/**
 * `POST /v1/messages` (Anthropic Messages) on every model server, on top of the server's own
 * `/v1/responses` handler: the request is converted (openai/messages.ts), served by that handler
 * as any Responses request is (same backend call, session, cancellation and training fields),
 * and its answer converted back — a Message, or the Messages event stream. Every failure on these
 * routes is answered in Anthropic's error shape `{type: "error", error: {type, message}}`.
 *
 * `POST /v1/messages/count_tokens` answers from the server's `countTokens` when it has one, and
 * otherwise with a 404 `not_found_error` (clients such as Claude Code then estimate).
 */
import { z } from 'zod';
import { compiled } from '../compiled-schema.js';
import { RawJson } from '../http/raw-json.js';
import { SseReply } from '../http/sse.js';
import { noteDroppedOnce } from '../openai/converter.js';
import type { ResponseCreateParams } from '../openai/schemas.js';
import {
  anthropicErrorBody,
  MessagesCountTokensParamsSchema,
  MessagesCreateParamsSchema,
  MessagesEventStream,
  messageEvents,
  messagesToResponsesParams,
  responsesToMessagesEvents,
  responseToMessage,
  type MessagesConversion,
} from '../openai/messages.js';
import type { HandlerContext, Route } from './define.js';
import { errorAnswer } from './errors.js';
import { isPromiseLike } from './fast-path.js';
import type { Logger } from './logger.js';

type AnyRoute = Route<unknown, unknown, z.ZodType>;
type Ctx = HandlerContext<unknown, unknown>;

/** Counts the input tokens of a (converted) request; the route's answer is `{input_tokens}`. */
export type CountTokens = (params: ResponseCreateParams, ctx: Ctx) => number | Promise<number>;

const anthropicError = (status: number, message: string): RawJson => new RawJson(anthropicErrorBody(status, JSON.stringify({ detail: message })), status);

function issuesText(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`).join('; ');
}

/** Any thrown value as an Anthropic error answer (status and headers as the server would answer it). */
function errorToAnthropic(err: unknown, log: Logger, url: string): RawJson {
  const answer = errorAnswer(err, log, 'POST', url);
  return new RawJson(anthropicErrorBody(answer.status, answer.text), answer.status, answer.headers);
}

/** The Responses handler's answer -> the Messages answer. */
function toMessagesAnswer(out: unknown, conv: MessagesConversion, stream: boolean): RawJson | SseReply | Record<string, unknown> {
  const opts = { model: conv.model, stopSequences: conv.stopSequences };
  if (out instanceof SseReply) {
    if (!stream) return anthropicError(500, 'the model server answered a non-streaming request with an event stream');
    return new SseReply(responsesToMessagesEvents(out.events, new MessagesEventStream(conv.model, conv.stopSequences)), out.onClose, out.status);
  }
  let response: unknown = out;
  if (out instanceof RawJson) {
    if (out.status >= 400) return new RawJson(anthropicErrorBody(out.status, out.text), out.status, out.headers);
    response = JSON.parse(out.text) as unknown;
  }
  if (response === null || typeof response !== 'object') return anthropicError(500, 'the model server answered with something that is not a Response');
  const message = responseToMessage(response as Record<string, unknown>, opts);
  return stream ? new SseReply(messageEvents(message)) : (message as unknown as Record<string, unknown>);
}

/**
 * Checks a Messages body and converts it; the Responses request is checked with the server's own
 * Responses schema. A RawJson is the 400 answer for a body that fails either check.
 */
function convert(body: unknown, responsesBody: z.ZodType, note: (fields: string[]) => void): { conv: MessagesConversion; params: unknown } | RawJson {
  const parsed = compiled(MessagesCreateParamsSchema).safeParse(body);
  if (!parsed.success) return anthropicError(400, issuesText(parsed.error.issues));
  const conv = messagesToResponsesParams(parsed.data);
  if (conv.dropped.length) note(conv.dropped);
  const request = compiled(responsesBody).safeParse(conv.params);
  if (!request.success) return anthropicError(400, `the request cannot be served as a Responses request: ${issuesText(request.error.issues)}`);
  return { conv, params: request.data };
}

/** The Messages routes of a model server whose Responses route is `responses`. */
export function messagesRoutes(responses: AnyRoute, log: Logger, countTokens?: CountTokens): { path: string; route: AnyRoute }[] {
  const note = noteDroppedOnce(log, 'POST /v1/messages (no Responses API equivalent)');
  const messages: AnyRoute = {
    // Checked in the handler, so that a bad body is answered in Anthropic's shape.
    body: z.unknown(),
    handler: (body: unknown, ctx: Ctx) => {
      try {
        const c = convert(body, responses.body, note);
        if (c instanceof RawJson) return c;
        const stream = c.conv.params.stream === true;
        const out = responses.handler(c.params, ctx);
        if (!isPromiseLike(out)) return toMessagesAnswer(out, c.conv, stream);
        return Promise.resolve(out).then(
          (v) => toMessagesAnswer(v, c.conv, stream),
          (err: unknown) => errorToAnthropic(err, ctx.log, '/v1/messages'),
        );
      } catch (err) {
        return errorToAnthropic(err, ctx.log, '/v1/messages');
      }
    },
  };
  const count: AnyRoute = {
    body: z.unknown(),
    handler: async (body: unknown, ctx: Ctx) => {
      if (!countTokens) return anthropicError(404, 'this model server does not count tokens (its backend has no tokenizer endpoint); estimate the count on the client');
      try {
        const counted = compiled(MessagesCountTokensParamsSchema).safeParse(body);
        if (!counted.success) return anthropicError(400, issuesText(counted.error.issues));
        const c = convert({ ...counted.data, max_tokens: 1 }, responses.body, note);
        if (c instanceof RawJson) return c;
        return { input_tokens: await countTokens(c.params as ResponseCreateParams, ctx) };
      } catch (err) {
        return errorToAnthropic(err, ctx.log, '/v1/messages/count_tokens');
      }
    },
  };
  return [
    { path: '/v1/messages', route: messages },
    { path: '/v1/messages/count_tokens', route: count },
  ];
}
