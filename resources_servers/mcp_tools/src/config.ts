/** The config of an mcp_tools instance: which MCP servers, their limits, and how verify scores. */
import { z } from 'zod';
import { ModelServerRefSchema } from '@nemo-gym/core/config';
import { ResourcesServerConfigSchema } from '@nemo-gym/core/server';

const ToolSelection = {
  /** Prepended to every tool name of this server (to keep names apart across servers). */
  prefix: z.string().default(''),
  /** Offer only these tools (MCP names); null offers every tool the server lists. */
  include: z.array(z.string()).nullable().default(null),
};

export const StdioServerSchema = z
  .object({
    /** The program to start (found on PATH); one process per rollout session. */
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** Extra environment (e.g. `${my_api_key}` from env.yaml); the rest is a small safe default set (HOME, PATH, …). */
    env: z.record(z.string(), z.string()).default({}),
    /** Working directory; relative paths are taken from the repository root (the default). */
    cwd: z.string().nullable().default(null),
    ...ToolSelection,
  })
  .strict();

export const HttpServerSchema = z
  .object({
    /** A Streamable HTTP endpoint; one MCP session per rollout session. */
    url: z.url(),
    /** Extra request headers (e.g. `Authorization: Bearer ${my_token}`). */
    headers: z.record(z.string(), z.string()).default({}),
    ...ToolSelection,
  })
  .strict();

export const McpServerSchema = z.union([StdioServerSchema, HttpServerSchema]);
export type McpServerConfig = z.output<typeof McpServerSchema>;

const McpToolVerifySchema = z
  .object({
    type: z.literal('mcp_tool'),
    /** Which configured server and which of its tools (MCP name) scores the rollout. */
    server: z.string(),
    tool: z.string(),
    /** Fixed arguments, overlaid by the task row's `arguments_field` object when present. */
    arguments: z.record(z.string(), z.unknown()).default({}),
    arguments_field: z.string().default('verify_arguments'),
    /**
     * number: the reward is `structuredContent.reward` or the whole text as a number;
     * equals / contains: 1.0 when the text (trimmed) equals / contains the row's `expected_field`, else 0.0.
     */
    result: z.enum(['number', 'equals', 'contains']).default('number'),
    expected_field: z.string().default('expected_output'),
  })
  .strict();

const JudgeVerifySchema = z
  .object({
    type: z.literal('judge'),
    model_server: ModelServerRefSchema,
    /** `{question}`, `{expected_answer}` and `{generated_answer}` are filled in. */
    prompt_template: z.string().default(
      'Question:\n{question}\n\nReference answer:\n{expected_answer}\n\nCandidate answer:\n{generated_answer}\n\n' +
        'Does the candidate answer agree with the reference answer? Answer with exactly one of [[YES]] or [[NO]].',
    ),
    expected_field: z.string().default('expected_output'),
    success_label: z.string().default('[[YES]]'),
    failure_label: z.string().default('[[NO]]'),
    responses_create_params: z.record(z.string(), z.unknown()).default({}),
    /** A judge answer with neither label scores 0 instead of being recorded as a judge failure (NG_ERR_JUDGE_FAILED). */
    unparseable_verdict_is_wrong: z.boolean().default(false),
  })
  .strict();

const ModuleVerifySchema = z
  .object({
    type: z.literal('module'),
    /** A JavaScript module (relative paths from the repository root) whose default export scores a rollout. */
    path: z.string().min(1),
  })
  .strict();

export const VerifySchema = z.discriminatedUnion('type', [McpToolVerifySchema, JudgeVerifySchema, ModuleVerifySchema]);
export type VerifyConfig = z.output<typeof VerifySchema>;

export const McpToolsConfigSchema = ResourcesServerConfigSchema.extend({
  mcp_servers: z.record(z.string(), McpServerSchema).refine((s) => Object.keys(s).length > 0, 'configure at least one MCP server'),
  verify: VerifySchema,
  /** Starting a server and the MCP handshake. */
  connect_timeout_s: z.number().positive().default(30),
  /** One tool call (the MCP request is cancelled after it). */
  tool_timeout_s: z.number().positive().default(60),
  /** How long a stdio server may take to exit once its stdin is closed, before SIGTERM. */
  close_grace_s: z.number().nonnegative().default(0.5),
  /** Longest tool output the model sees, in characters; the rest is cut with a note saying so. */
  max_output_chars: z.number().int().positive().default(20_000),
  /**
   * Largest single message read from a stdio server, in bytes. A larger one is not buffered: it is
   * dropped as it streams in, and its call answers an error saying how large it was.
   */
  max_message_bytes: z.number().int().positive().default(16 * 1024 * 1024),
  /**
   * Output a stdio server may write to stdout that is not an MCP message (stray log lines), in
   * bytes over its life; beyond it the server is stopped and its rollout fails with the reason.
   */
  max_stdout_noise_bytes: z.number().int().nonnegative().default(64 * 1024),
  /** A rollout session unused this long is closed (its MCP sessions and processes too). */
  session_idle_ttl_s: z.number().positive().default(900),
  /** Most rollout sessions open at once; beyond it the least recently used one is closed. */
  max_sessions: z.number().int().positive().default(4096),
});
export type McpToolsConfig = z.output<typeof McpToolsConfigSchema>;
