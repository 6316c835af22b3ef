/**
 * instruction_following: IFEval-style verifiable instructions (54 ids). The reward is 1.0 when the
 * final response text follows every listed instruction. Checks run in a worker-thread pool, or
 * inline on the server's own thread with `num_workers: 0` (the default when replicas take every core).
 */
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { repoRoot } from '@nemo-gym/core/config';
import { ConfigError, TimeoutError } from '@nemo-gym/core/errors';
import { LaxInt } from '@nemo-gym/core/py';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';
import { defaultWorkerCount, replicasOnHost, WorkerPool } from '@nemo-gym/core/workers';
import { profilesDirProblem } from './src/langdetect.js';
import { ensurePunktDir } from './src/punkt_download.js';
import { finalResponseText, toolsFor, type VerifyResult, type VerifyTask } from './src/verify.js';

const badWorkerCount = (issue: { input?: unknown }) =>
  `got ${String(issue.input)}; use 0 (checks inline on the server's thread) or a whole number of check worker threads`;

export const InstructionFollowingConfigSchema = ResourcesServerConfigSchema.extend({
  /**
   * Extra folder searched first for tokenizers/punkt_tab/english (before NLTK_DATA and NLTK's usual
   * places); a relative path is taken from the repo root.
   */
  nltk_data_dir: z.string().nullable().optional(),
  /** Download NLTK's punkt_tab package on first use when it is nowhere to be found (default true). */
  nltk_download: z.boolean().default(true),
  /** Base URL of NLTK's data repository, for a mirror (default: NLTK's repository on GitHub). */
  nltk_data_url: z.string().nullable().optional(),
  /** Where the download is unpacked (default ~/nltk_data, where NLTK's own downloader puts it). */
  nltk_download_dir: z.string().nullable().optional(),
  /**
   * Folder of the Python langdetect package's profile files (55 languages), e.g. Debian's
   * /usr/lib/python3/dist-packages/langdetect/profiles; default: the 53 of the npm package.
   */
  langdetect_profiles_dir: z.string().nullable().optional(),
  /**
   * Worker threads for the checks; 0 runs them inline on the server's own thread (still stopped at
   * verify_timeout_s). Default: this replica's share of the cores minus its main thread,
   * max(0, floor(cores / num_replicas) - 1), so cores - 1 for a single process and 0 (inline) once
   * there are as many replicas on the host as cores.
   */
  num_workers: z
    .number()
    .int({ error: badWorkerCount })
    .min(0, { error: badWorkerCount })
    .nullable()
    .optional(),
  /** Time limit of one verify's checks; past it every instruction counts as not followed. */
  verify_timeout_s: z.number().positive().default(60),
  /**
   * Also answer `reward_components`: one per instruction kind (the part of the id before `:`), and
   * `not_all_followed`, summing to the reward (see {@link instructionComponents}). Off by default:
   * upstream's answer has no such key.
   */
  reward_components: z.boolean().default(false),
});

/**
 * The reward split by instruction kind, summing to the all-or-nothing reward as NeMo-RL requires of
 * `reward_components` (reward == sum): each kind gets its followed instructions' share of all the
 * instructions (its partial credit), and `not_all_followed` takes that credit back when any
 * instruction was not followed (0 when all were). E.g. 2 keywords (1 followed) and 1 punctuation
 * (followed): keywords 1/3, punctuation 1/3, not_all_followed -2/3, reward 0.
 */
export function instructionComponents(instructionIds: readonly unknown[], followList: readonly boolean[], reward: number): Record<string, number> {
  const n = followList.length;
  const out = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const id = instructionIds[i];
    const kind = typeof id === 'string' && id.includes(':') ? id.slice(0, id.indexOf(':')) : String(id);
    out.set(kind, (out.get(kind) ?? 0) + (followList[i] ? 1 / n : 0));
  }
  if (n === 0) return {};
  let credit = 0;
  for (const v of out.values()) credit += v;
  out.set('not_all_followed', reward - credit);
  return Object.fromEntries(out);
}

export const InstructionFollowingRunFieldsSchema = z.object({
  id: LaxInt,
  instruction_id_list: z.array(z.unknown()),
  prompt: z.string(),
  kwargs: z.array(z.unknown()),
});

export const InstructionFollowingVerifyRequestSchema = BaseVerifyRequestSchema.extend(InstructionFollowingRunFieldsSchema.shape);

interface State {
  pool: WorkerPool;
  punktDir: string;
  langdetectProfilesDir: string | null;
  timeoutMs: number;
}

function fromRepoRoot(p: string): string {
  return isAbsolute(p) ? p : join(repoRoot(), p);
}

export const server = defineResourcesServer({
  className: 'InstructionFollowingResourcesServer',
  configSchema: InstructionFollowingConfigSchema,
  setup: async (ctx): Promise<State> => {
    // Finds the Punkt parameters where NLTK looks, else downloads them once; fails start-up with
    // what to fetch and where to put it when neither works.
    const configured = ctx.config.nltk_data_dir;
    const downloadDir = ctx.config.nltk_download_dir;
    const punktDir = await ensurePunktDir({
      configuredDir: configured ? fromRepoRoot(configured) : null,
      download: ctx.config.nltk_download,
      ...(ctx.config.nltk_data_url ? { baseUrl: ctx.config.nltk_data_url } : {}),
      ...(downloadDir ? { downloadDir: fromRepoRoot(downloadDir) } : {}),
      log: (line) => ctx.log.info(line),
    });
    const profiles = ctx.config.langdetect_profiles_dir;
    const langdetectProfilesDir = profiles ? fromRepoRoot(profiles) : null;
    toolsFor(punktDir);
    // A bad profile folder fails start-up (the checks load the profiles on first use).
    const problem = langdetectProfilesDir ? profilesDirProblem(langdetectProfilesDir) : null;
    if (problem) {
      throw new ConfigError(
        `instruction_following: cannot use langdetect_profiles_dir ${langdetectProfilesDir}: ${problem}. ` +
          `Point it at the Python langdetect package's profiles folder (files named af, ar, ..., en, ...), or remove the key.`,
      );
    }
    const workerModule = new URL('./src/worker.ts', import.meta.url);
    const timeoutMs = ctx.config.verify_timeout_s * 1000;
    const pool = new WorkerPool(workerModule, {
      size: ctx.config.num_workers ?? defaultWorkerCount(replicasOnHost(ctx.config)),
      taskTimeoutMs: timeoutMs,
    });
    return { pool, punktDir, langdetectProfilesDir, timeoutMs };
  },
  close: async (ctx) => {
    await ctx.state.pool.close();
  },
  verify: {
    body: InstructionFollowingVerifyRequestSchema,
    handler: async (body, ctx) => {
      const task: VerifyTask = {
        text: finalResponseText(body.response),
        instructionIds: body.instruction_id_list,
        kwargs: body.kwargs,
        punktDir: ctx.state.punktDir,
        langdetectProfilesDir: ctx.state.langdetectProfilesDir,
      };
      let result: VerifyResult;
      try {
        result = await ctx.state.pool.run<VerifyResult>('verifyInstructions', [task]);
      } catch (e) {
        if (!(e instanceof TimeoutError)) throw e;
        ctx.log.warn(`verify checks stopped after ${ctx.state.timeoutMs} ms; counting every instruction as not followed`);
        const n = Math.min(body.instruction_id_list.length, body.kwargs.length);
        result = { followList: new Array<boolean>(n).fill(false), errors: [] };
      }
      // Like upstream, say why an instruction counted as not followed (a few per verify at most).
      for (const err of result.errors.slice(0, 5)) ctx.log.warn(`instruction ${err}`);
      if (result.errors.length > 5) ctx.log.warn(`... and ${result.errors.length - 5} more instructions with errors`);
      const followAll = result.followList.length > 0 && result.followList.every((x) => x);
      const reward = followAll ? 1.0 : 0.0;
      return {
        responses_create_params: body.responses_create_params,
        response: body.response,
        reward,
        ...(ctx.config.reward_components ? { reward_components: instructionComponents(body.instruction_id_list, result.followList, reward) } : {}),
        follow_all_instructions: followAll,
        follow_instruction_list: result.followList,
        kwargs: body.kwargs,
        instruction_id_list: body.instruction_id_list,
        prompt: body.prompt,
      };
    },
  },
});

startIfMain(import.meta.url, server);
