/**
 * Task rows checked against what their resources server takes, before a model is paid for them.
 * The server publishes the JSON Schema of its verify request (GET /ng_verify_schema, from its zod
 * schema); a row must carry the request's fields except `response`, which the agent adds.
 *
 * The rule, the same for strict and loose verify schemas (a loose one lets unknown keys through,
 * and rows often carry keys the verifier never reads, so an unknown key alone is no error):
 * - a field the schema requires and the row lacks is an error; when the row has a key within
 *   edit distance 2 of it, that key is named as the likely misspelling;
 * - a key the schema does not know, within edit distance 2 of a known field the row lacks
 *   (required or not), is an error naming that field;
 * - other unknown keys pass. Only the top-level keys are checked (the values are the verifier's).
 *
 * A row that lists no tools, or none of its server's tools, gets a warning unless its agent
 * offers the server's tools itself (`offer_server_tools`).
 */
import { editDistance } from '../config/parse.js';
/** A JSON Schema document (as server/describe.ts publishes it). */
type JsonSchema = Record<string, unknown>;

/** Keys a verify request has that the row does not bring: the agent adds the response. */
const ADDED_BY_AGENT = new Set(['response']);
/** How far a key may be from a field's name to be taken for a misspelling of it. */
const NEAR = 2;

/** The top-level fields of a verify request, as a row must give them. */
export interface RowFields {
  /** Which server's verify request (for messages). */
  server: string;
  required: string[];
  known: string[];
}

/** The row fields of a verify-request JSON Schema (its top-level properties and required list). */
function rowFieldsOf(server: string, schema: JsonSchema): RowFields {
  const props = schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
  return { server, known: props.filter((k) => !ADDED_BY_AGENT.has(k)), required: required.filter((k) => !ADDED_BY_AGENT.has(k)) };
}

export interface FieldProblem {
  field: string;
  message: string;
}

function nearest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = NEAR + 1;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best;
}

/** What is wrong with a row's top-level keys for its server (empty when nothing is). */
function rowFieldProblems(keys: readonly string[], fields: RowFields): FieldProblem[] {
  const have = new Set(keys);
  const known = new Set(fields.known);
  const unknown = keys.filter((k) => !known.has(k));
  const absent = fields.known.filter((k) => !have.has(k));
  const problems: FieldProblem[] = [];
  const named = new Set<string>();
  for (const f of fields.required) {
    if (have.has(f)) continue;
    const near = nearest(f, unknown);
    if (near) named.add(near);
    problems.push({
      field: f,
      message: `missing: ${fields.server}'s verify request requires \`${f}\`${near ? `; the row has \`${near}\` (did you mean \`${f}\`?)` : ''}`,
    });
  }
  for (const k of unknown) {
    if (named.has(k)) continue;
    const near = nearest(k, absent);
    if (near) problems.push({ field: k, message: `not a field of ${fields.server}'s verify request (did you mean \`${near}\`?)` });
  }
  return problems;
}

/** The names of the function tools a row's `responses_create_params.tools` lists. */
function rowToolNames(params: unknown): string[] {
  const tools = params && typeof params === 'object' ? (params as { tools?: unknown }).tools : undefined;
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((t: unknown) => (t && typeof t === 'object' && typeof (t as { name?: unknown }).name === 'string' ? [(t as { name: string }).name] : []));
}

/** True when a server with tools gets a row that offers none of them. */
function offersNoServerTool(rowTools: readonly string[], serverTools: readonly string[]): boolean {
  return serverTools.length > 0 && !rowTools.some((t) => serverTools.includes(t));
}

/** What a row is checked against: its resources server's verify-request fields and tools, and whether its agent offers them itself. */
export interface RowChecks {
  /** The server, as messages name it (`resources server \`math\``). */
  server: string;
  /** Null when the server publishes no verify request. */
  fields: RowFields | null;
  tools: string[];
  /** The agent offers the server's tools to rows that list none (`offer_server_tools`). */
  offers: boolean;
}

/** The checks of a server's published verify-request schema and tool names. */
export function rowChecksOf(server: string, schema: JsonSchema | null, tools: readonly string[], offers: boolean): RowChecks {
  return { server, fields: schema ? rowFieldsOf(server, schema) : null, tools: [...tools], offers };
}

/** A row's field problems, and whether it is left without any of its server's tools. */
export function checkRowAgainst(keys: readonly string[], params: unknown, checks: RowChecks): { problems: FieldProblem[]; noTools: boolean } {
  return {
    problems: checks.fields ? rowFieldProblems(keys, checks.fields) : [],
    noTools: !checks.offers && offersNoServerTool(rowToolNames(params), checks.tools),
  };
}

/** The warning for `count` rows of `where` that offer none of their server's tools. */
export function noToolsWarning(checks: RowChecks, count: number, where: string): string {
  return (
    `Warning: ${count} row(s) of ${where} offer none of ${checks.server}'s tools (${checks.tools.join(', ')}), so the model cannot call them. ` +
    'List them in responses_create_params.tools, or set offer_server_tools: true on the agent.'
  );
}
