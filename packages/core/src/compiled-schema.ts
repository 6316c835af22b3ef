/**
 * Compiled twins of zod schemas for the request path. `z.compile` generates a parser for a schema:
 * an input the schema accepts takes the generated code, anything else is handed to the schema's own
 * parser, so the output and every error are the ones the schema gives. Each schema is compiled once,
 * on first use; a schema zod cannot compile keeps its own parser.
 */
import { z } from 'zod';

const twins = new WeakMap<z.ZodType, z.ZodType>();

/** The compiled twin of a final schema (derive new schemas from the original, never from this). */
export function compiled<T extends z.ZodType>(schema: T): T {
  let twin = twins.get(schema);
  if (twin === undefined) {
    twin = z.compile(schema);
    twins.set(schema, twin);
  }
  return twin as T;
}
