/**
 * What a resources server tells about itself, from the zod schemas it is defined with:
 *
 * - `GET /ng_tools`: its tools as Responses API function tools (name, description, JSON Schema of
 *   the arguments), which an agent offers the model when a task row lists none (`offer_server_tools`);
 * - `GET /ng_verify_schema`: the JSON Schema of its verify request, against which the data checks
 *   and the collector's pre-flight check task rows before a model is called (data/row-fields.ts).
 *
 * JSON Schema is made with zod's own `z.toJSONSchema`, for the input side (what a client sends);
 * parts JSON Schema cannot express (a transform, a custom check) are left open.
 */
import { z } from 'zod';

export const TOOLS_PATH = '/ng_tools';
export const VERIFY_SCHEMA_PATH = '/ng_verify_schema';

export type JsonSchema = Record<string, unknown>;

/** A tool as the Responses API takes it in `tools`. */
export interface FunctionToolDefinition {
  type: 'function';
  name: string;
  description: string | null;
  parameters: JsonSchema;
  strict: false;
}

/** What a resources server publishes about itself. */
export interface ResourcesServerDescription {
  tools: FunctionToolDefinition[];
  /** Null for a server without /verify (a Gymnasium-style environment scores in /step). */
  verifyRequestSchema: JsonSchema | null;
}

/** The input-side JSON Schema of a zod schema, without the `$schema` line. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** The function tools of a resources server's tool routes. */
export function toolDefinitions(tools: Record<string, { body: z.ZodType; description?: string }>): FunctionToolDefinition[] {
  return Object.entries(tools).map(([name, tool]) => ({
    type: 'function',
    name,
    description: tool.description ?? tool.body.description ?? null,
    parameters: jsonSchemaOf(tool.body),
    strict: false,
  }));
}
