/**
 * Checks made before a collection sends its first rollout, so that a misspelled agent, a server
 * that is down or a dead model backend is one clear line at once instead of a file of failures
 * minutes later:
 *
 * 1. every agent the run uses is an agent instance of the running config (with a suggestion);
 * 2. that agent and every server it refers to (and theirs, e.g. a judge model) answer `GET /`;
 * 3. each of those model servers gets its backend's model list (`GET /v1/models`, one cheap
 *    request through the model server, which holds the URL and the key). Any answer but a refused
 *    key (401/403) or a server error counts as up: a backend without a model list (404) answers.
 * 4. given the input file (`rows`), every row's top-level fields are checked against the verify
 *    request of its agent's resources server (GET /ng_verify_schema; the rule is in
 *    data/row-fields.ts): a misspelt or missing task field is refused here, naming the row, the
 *    field and the nearest known name, instead of failing at /verify after the model call.
 *
 * Nothing is sent to `/run` and nothing is written. Every problem found is reported, one line each.
 */
import { getFirstServerConfigDict, asServerRef } from '../config/instances.js';
import { isDict, type ConfigDict } from '../config/merge.js';
import { closest } from '../config/parse.js';
import { readLines } from '../data/lines.js';
import { checkRowAgainst, noToolsWarning, rowChecksOf, type RowChecks } from '../data/row-fields.js';
import { PreflightError } from '../errors.js';
import { TOOLS_PATH, VERIFY_SCHEMA_PATH, type FunctionToolDefinition, type JsonSchema } from '../server/describe.js';
import { offersServerTools } from '../server/tool-loop.js';
import type { ServerClient } from '../client/client.js';

export interface PreflightOptions {
  /** Longest wait for each check (default 15 s; the model list itself is bounded at 10 s by the model server). */
  timeoutMs?: number;
  /** Notes that are not failures (e.g. a model server without a model list). */
  log?: (msg: string) => void;
  /** The input rows, checked against their resources servers' verify requests (step 4). */
  rows?: { path: string; limit: number | null; agentName?: string };
}

/** Rows named in a report before the rest are counted. */
const ROWS_LISTED = 10;

export interface PreflightReport {
  /** Servers that answered, by instance name. */
  servers: string[];
  /** Model servers whose backend answered its model list. */
  backends: string[];
}

const KIND: Record<string, string> = { responses_api_agents: 'agent', resources_servers: 'resources server', responses_api_models: 'model server' };

const typeOf = (config: ConfigDict, name: string): string | undefined => {
  const top = config[name];
  return isDict(top) ? Object.keys(top)[0] : undefined;
};

const instancesOf = (config: ConfigDict, type: string) => Object.keys(config).filter((k) => typeOf(config, k) === type && getFirstServerConfigDict(config, k));

/** Server refs held directly in an instance's own config. */
function refsOf(config: ConfigDict, name: string): { key: string; type: string; name: string }[] {
  const inner = getFirstServerConfigDict(config, name) ?? {};
  const out: { key: string; type: string; name: string }[] = [];
  for (const [key, value] of Object.entries(inner)) {
    const ref = asServerRef(value);
    if (ref) out.push({ key, type: ref.type, name: ref.name });
  }
  return out;
}

/** The first line of a server's error answer: its `detail` when it has one. */
function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (body && typeof body === 'object' && body.detail !== undefined) return typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
  } catch {
    // not JSON: the text itself
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs the checks; throws one PreflightError listing every problem found. */
export async function preflight(client: ServerClient, agentNames: readonly string[], options: PreflightOptions = {}): Promise<PreflightReport> {
  const config = client.globalConfig;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const problems: string[] = [];
  const agents = instancesOf(config, 'responses_api_agents');

  // 1. The agents exist.
  const known: string[] = [];
  for (const name of agentNames) {
    if (typeOf(config, name) === 'responses_api_agents' && getFirstServerConfigDict(config, name)) {
      known.push(name);
      continue;
    }
    const other = typeOf(config, name);
    const near = closest(name, agents);
    problems.push(
      other
        ? `\`${name}\` is a ${other} instance, not an agent; give +agent_name=<agent> (running agents: ${agents.join(', ') || 'none'}).`
        : `agent \`${name}\` is not in the running config${near ? ` (did you mean \`${near}\`?)` : ''}; running agents: ${agents.join(', ') || 'none'}. Fix +agent_name or the rows' agent_ref, or start it with ng-run.`,
    );
  }

  // 2. Every server they use, transitively, with who uses it (for the message).
  const usedBy = new Map<string, string>();
  const queue = [...known];
  for (const a of known) usedBy.set(a, '');
  while (queue.length) {
    const name = queue.shift()!;
    for (const ref of refsOf(config, name)) {
      if (usedBy.has(ref.name)) continue;
      usedBy.set(ref.name, `${name}.${ref.key}`);
      if (getFirstServerConfigDict(config, ref.name)) queue.push(ref.name);
      else problems.push(`\`${name}\` refers to the ${ref.type} server \`${ref.name}\` (key ${ref.key}), which is not in the running config.`);
    }
  }
  const servers = [...usedBy.keys()].filter((n) => getFirstServerConfigDict(config, n));
  const describe = (n: string) => `${KIND[typeOf(config, n) ?? ''] ?? 'server'} \`${n}\`${usedBy.get(n) ? ` (${usedBy.get(n)})` : ''}`;

  const up = new Set<string>();
  await Promise.all(
    servers.map(async (n) => {
      let url = '';
      try {
        url = client.baseUrl(n);
        const res = await client.get(n, '/', { retry: false, signal: AbortSignal.timeout(timeoutMs) });
        if (res.status >= 500) problems.push(`${describe(n)} at ${url} answered HTTP ${res.status}: ${detailOf(res.text)}`);
        else up.add(n);
      } catch (err) {
        problems.push(`${describe(n)} at ${url || '(no address)'} does not answer: ${reasonOf(err)}. Is ng-run still running this config?`);
      }
    }),
  );

  // 3. The backends behind the model servers that answered.
  const backends: string[] = [];
  const models = servers.filter((n) => up.has(n) && typeOf(config, n) === 'responses_api_models');
  await Promise.all(
    models.map(async (n) => {
      try {
        const res = await client.get(n, '/v1/models', { retry: false, signal: AbortSignal.timeout(timeoutMs) });
        if (res.ok) {
          backends.push(n);
          return;
        }
        let body: { path?: unknown } = {};
        try {
          body = JSON.parse(res.text) as typeof body;
        } catch {
          // not JSON
        }
        if (res.status === 404 && body && body.path === '/v1/models') {
          options.log?.(`Note: model server \`${n}\` has no GET /v1/models, so its backend was not checked before the run.`);
          return;
        }
        const detail = detailOf(res.text);
        // Answering is what counts: a backend without a model list (404/405) is up.
        if (res.status === 404 || res.status === 405) {
          backends.push(n);
          options.log?.(`Note: the model backend behind model server \`${n}\` answers but has no model list (HTTP ${res.status}); check its base URL if rollouts fail.`);
          return;
        }
        const hint =
          res.status === 401 || res.status === 403 ? ' The backend refused the API key: check the key the model server is given (e.g. policy_api_key in env.yaml).' : '';
        problems.push(`the model backend behind ${describe(n)} failed its check (HTTP ${res.status}): ${detail}.${hint}`);
      } catch (err) {
        problems.push(`${describe(n)} did not answer its backend check (GET /v1/models): ${reasonOf(err)}`);
      }
    }),
  );

  // 4. The rows against the verify requests of their servers (only when everything answered).
  if (problems.length === 0 && options.rows) problems.push(...(await rowProblems(client, known, options.rows, timeoutMs, options.log)));

  if (problems.length > 0) {
    throw new PreflightError(`${problems.length === 1 ? 'a check before the first rollout failed' : `${problems.length} checks before the first rollout failed`}; nothing was sent or written:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
  return { servers: [...up], backends };
}

/** What each agent's resources server publishes: its verify-request fields and its tools. */
async function agentRowChecks(client: ServerClient, agents: readonly string[], timeoutMs: number): Promise<Map<string, RowChecks>> {
  const config = client.globalConfig;
  const out = new Map<string, RowChecks>();
  const getJson = async <T>(server: string, path: string): Promise<T | null> => {
    const res = await client.get(server, path, { retry: false, signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? res.json<T>() : null;
  };
  await Promise.all(
    agents.map(async (agent) => {
      const inner = getFirstServerConfigDict(config, agent) ?? {};
      const ref = asServerRef(inner.resources_server);
      if (!ref || !getFirstServerConfigDict(config, ref.name)) return;
      const [schema, tools] = await Promise.all([getJson<JsonSchema>(ref.name, VERIFY_SCHEMA_PATH), getJson<FunctionToolDefinition[]>(ref.name, TOOLS_PATH)]);
      const offers = offersServerTools(inner as { offer_server_tools?: boolean | null }, config);
      out.set(agent, rowChecksOf(`resources server \`${ref.name}\``, schema && typeof schema === 'object' ? schema : null, Array.isArray(tools) ? tools.map((t) => t.name) : [], offers));
    }),
  );
  return out;
}

/** Step 4: one problem per row whose fields do not fit (the first ROWS_LISTED, then a count); tool warnings go to `log`. */
async function rowProblems(client: ServerClient, agents: readonly string[], rows: NonNullable<PreflightOptions['rows']>, timeoutMs: number, log?: (msg: string) => void): Promise<string[]> {
  const checks = await agentRowChecks(client, agents, timeoutMs);
  if (checks.size === 0) return [];
  const problems: string[] = [];
  let bad = 0;
  const toolless = new Map<RowChecks, number>();
  let index = -1;
  for await (const { lineNo, text } of readLines(rows.path)) {
    index++;
    if (rows.limit !== null && index >= rows.limit) break;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue; // recorded as a bad row when it runs
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) continue;
    const ref = row.agent_ref as { name?: unknown } | undefined;
    const agent = typeof ref?.name === 'string' ? ref.name : rows.agentName;
    const check = agent === undefined ? undefined : checks.get(agent);
    if (!check) continue;
    const found = checkRowAgainst(Object.keys(row), row.responses_create_params, check);
    if (found.problems.length > 0 && ++bad <= ROWS_LISTED) {
      problems.push(`row ${index} (line ${lineNo} of ${rows.path}): ${found.problems.map((p) => `\`${p.field}\` ${p.message}`).join('; ')}`);
    }
    if (found.noTools) toolless.set(check, (toolless.get(check) ?? 0) + 1);
  }
  if (bad > ROWS_LISTED) problems.push(`… and ${bad - ROWS_LISTED} more rows whose fields do not fit their verify request`);
  for (const [check, n] of toolless) log?.(noToolsWarning(check, n, rows.path));
  return problems;
}
