/**
 * Group rewards: a resources server that declares a group verify (`verify_group: true` in its
 * instance config, and a `verifyGroup` in its definition, which serves `POST /verify_group`) scores
 * the rollouts of one task together. The collector (local or through the queue) holds each finished
 * rollout of such a task here instead of writing it, and once every repeat is in (or
 * `group_wait_timeout_s` after the first one finished) sends the members together and writes each
 * with the reward the server gave it:
 *
 * - the output row is the rollout's own verify answer with `reward` replaced by the group reward,
 *   the per-member `/verify` reward kept as `verify_reward`, and `group_verify` saying how the group
 *   was scored (its size and whatever the server returned for that member);
 * - a member that failed is left out and the group scored on the rest (`group_member_failure:
 *   score_rest`), or every member of the group is recorded as failed (`fail_group`); a member that
 *   has not finished at the deadline is cancelled where the collector can (locally) and recorded as
 *   failed either way; a group verify that fails is a recorded failure of each member, never a reward;
 * - a group is written in one append, so the output holds the whole group or none of it: a rerun
 *   counts a task with group-scored rows as done (its group is never scored twice) and runs every
 *   member of a task without them again (what a killed collector held is not lost, it is redone).
 */
import { GROUP_FIELD, type GroupSettings } from '../config/group-verify.js';
import { isDict } from '../config/merge.js';
import type { ServerClient } from '../client/client.js';
import { GroupVerifyError, describeError } from '../errors.js';

export { checkGroupOverrides, groupVerifierOf, type GroupOverrides } from '../config/group-verify.js';

/** The member id of (task, repeat) in a /verify_group request: `<task>-<repeat>`, as rollout ids are made. */
export const memberId = (taskIndex: number, rolloutIndex: number) => `${taskIndex}-${rolloutIndex}`;

/** One finished rollout held for its group. */
export interface GroupMember {
  taskIndex: number;
  rolloutIndex: number;
  agent: string;
  /** 1-based input line. */
  line: number;
  /** The agent's verify answer (tags `_ng_*` are dropped when it is sent and written again). */
  row: Record<string, unknown>;
  /** How long the rollout took (ms), for the latency metrics. */
  latencyMs?: number;
}

/** A member that will not be written with a reward, and why. */
export interface GroupMemberLoss {
  taskIndex: number;
  rolloutIndex: number;
  agent: string;
  line: number;
  err: unknown;
}

export interface GroupCollectorOptions {
  client: ServerClient;
  numRepeats: number;
  /** The group verifier of an agent (memoized here), null for agents scored one by one. */
  verifierOf: (agent: string) => { server: string; settings: GroupSettings } | null;
  /** Writes a scored group: one text of output lines (each ending in a newline) and its members with their final rows. */
  write: (text: string, members: { member: GroupMember; row: Record<string, unknown> }[]) => Promise<void>;
  /** Records a member that was held (or arrived late) and is not written with a reward. */
  lose: (loss: GroupMemberLoss) => Promise<void>;
  /** Cancels /verify_group calls in flight when the collection stops. */
  signal?: AbortSignal;
  log?: (msg: string) => void;
}

interface Group {
  task: number;
  agent: string;
  server: string;
  settings: GroupSettings;
  results: Map<number, GroupMember>;
  failed: Set<number>;
  timer: NodeJS.Timeout | null;
  /** Members still running that can be cancelled at the deadline (local collector). */
  running: Map<number, AbortController>;
}

/** Strips the collector's tags (`_ng_*`) from a verify answer. */
function untagged(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!k.startsWith('_ng_')) out[k] = v;
  return out;
}

/**
 * The groups of a collection while their members finish. Both collectors feed it: `result` for
 * a member that finished, `failed` for one recorded as failed; it scores each group once and
 * hands back what to write (`write`) or record (`lose`).
 */
export class GroupCollector {
  private readonly groups = new Map<number, Group>();
  /** Tasks whose group was scored or given up in this run: a member arriving later is a loss. */
  private readonly closed = new Map<number, string>();
  private readonly verifiers = new Map<string, { server: string; settings: GroupSettings } | null>();
  private readonly scoring = new Set<Promise<void>>();
  /** Tasks whose group is being scored (closed, not yet written or recorded). */
  private readonly scoringTasks = new Set<number>();
  /** Groups scored and members written with a group reward in this run. */
  scoredGroups = 0;

  constructor(private readonly opts: GroupCollectorOptions) {}

  /** Whether an agent's rollouts are scored as groups. */
  grouped(agent: string | null): boolean {
    if (agent === null) return false;
    if (!this.verifiers.has(agent)) this.verifiers.set(agent, this.opts.verifierOf(agent));
    return this.verifiers.get(agent) !== null;
  }

  private groupOf(task: number, agent: string): Group {
    let g = this.groups.get(task);
    if (!g) {
      const v = this.verifiers.get(agent) ?? this.opts.verifierOf(agent)!;
      g = { task, agent, server: v.server, settings: v.settings, results: new Map(), failed: new Set(), timer: null, running: new Map() };
      this.groups.set(task, g);
    }
    return g;
  }

  /**
   * A signal that aborts when the member's group stops waiting for it (the deadline passed), with
   * the reason as a GroupVerifyError; the local collector passes it to the member's /run.
   */
  memberSignal(taskIndex: number, rolloutIndex: number, agent: string): AbortSignal {
    const closedWhy = this.closed.get(taskIndex);
    // Its group is no longer waiting: the member is not run at all.
    if (closedWhy !== undefined) return AbortSignal.abort(new GroupVerifyError(`rollout ${rolloutIndex} of task ${taskIndex} was not run: its group was closed (${closedWhy})`));
    const g = this.groupOf(taskIndex, agent);
    const ctl = new AbortController();
    g.running.set(rolloutIndex, ctl);
    return ctl.signal;
  }

  /** A member finished with a result: held for its group (or a loss when its group is closed). */
  async result(m: GroupMember): Promise<void> {
    const closedWhy = this.closed.get(m.taskIndex);
    if (closedWhy !== undefined) {
      await this.opts.lose({ ...m, err: new GroupVerifyError(`rollout ${m.rolloutIndex} of task ${m.taskIndex} finished after its group was closed (${closedWhy}); it is not scored on its own`) });
      return;
    }
    const g = this.groupOf(m.taskIndex, m.agent);
    g.running.delete(m.rolloutIndex);
    g.results.set(m.rolloutIndex, m);
    this.progress(g);
  }

  /** A member was recorded as failed by the collector. */
  failed(taskIndex: number, rolloutIndex: number, agent: string): void {
    if (this.closed.has(taskIndex)) return;
    const g = this.groupOf(taskIndex, agent);
    g.running.delete(rolloutIndex);
    g.failed.add(rolloutIndex);
    this.progress(g);
  }

  private progress(g: Group): void {
    if (g.results.size + g.failed.size >= this.opts.numRepeats) {
      this.close(g, null);
      return;
    }
    if (g.timer === null) {
      g.timer = setTimeout(() => this.close(g, g.settings.waitTimeoutMs), g.settings.waitTimeoutMs);
      g.timer.unref?.();
    }
  }

  /** Ends the wait for a group: scores it, or records its members as failed. `deadlineMs`: closed by the deadline. */
  private close(g: Group, deadlineMs: number | null): void {
    if (g.timer) clearTimeout(g.timer);
    this.groups.delete(g.task);
    const missing: number[] = [];
    for (let r = 0; r < this.opts.numRepeats; r++) if (!g.results.has(r) && !g.failed.has(r)) missing.push(r);
    const failPolicy = g.settings.memberFailure === 'fail_group';
    const incomplete = g.failed.size > 0 || missing.length > 0;
    const why =
      deadlineMs !== null
        ? `group_wait_timeout_s=${deadlineMs / 1000} passed with rollout(s) ${missing.join(', ')} unfinished; ${failPolicy ? 'the group is recorded as failed (group_member_failure=fail_group)' : 'the group was scored without them'}`
        : 'its group was scored';
    this.closed.set(g.task, why);
    for (const [r, ctl] of g.running) {
      if (missing.includes(r)) ctl.abort(new GroupVerifyError(`rollout ${r} of task ${g.task} did not finish in time for its group: ${why}`));
    }
    g.running.clear();
    const members = [...g.results.values()].sort((a, b) => a.rolloutIndex - b.rolloutIndex);
    if (members.length === 0) return;
    let done: Promise<void>;
    if (failPolicy && incomplete) {
      const lost = [...[...g.failed].map((r) => `${r} failed`), ...missing.map((r) => `${r} did not finish within group_wait_timeout_s=${g.settings.waitTimeoutMs / 1000}`)];
      const err = new GroupVerifyError(`the group of task ${g.task} is recorded as failed (group_member_failure=fail_group): rollout(s) ${lost.join(', ')}`);
      done = this.loseAll(members, err);
    } else {
      done = this.score(g, members);
    }
    this.scoringTasks.add(g.task);
    const p: Promise<void> = done.finally(() => {
      this.scoring.delete(p);
      this.scoringTasks.delete(g.task);
    });
    this.scoring.add(p);
  }

  private async loseAll(members: GroupMember[], err: unknown): Promise<void> {
    for (const m of members) await this.opts.lose({ taskIndex: m.taskIndex, rolloutIndex: m.rolloutIndex, agent: m.agent, line: m.line, err });
  }

  private async score(g: Group, members: GroupMember[]): Promise<void> {
    let rewards: Map<string, { reward: number; extra: Record<string, unknown> }>;
    try {
      const body = { task_index: g.task, num_repeats: this.opts.numRepeats, members: members.map((m) => ({ member_id: memberId(m.taskIndex, m.rolloutIndex), ...untagged(m.row) })) };
      const res = await this.opts.client.post(g.server, '/verify_group', body, this.opts.signal ? { signal: this.opts.signal } : {});
      if (!res.ok) throw res.error();
      rewards = rewardsOf(res.json<unknown>(), members, g.server);
    } catch (err) {
      // Stopped while scoring: nothing written, nothing recorded; the rerun runs the group again.
      if (this.opts.signal?.aborted) return;
      this.opts.log?.(`/verify_group of ${g.server} failed for task ${g.task}: ${describeError(err)}`);
      await this.loseAll(members, err);
      return;
    }
    let text = '';
    const written: { member: GroupMember; row: Record<string, unknown> }[] = [];
    for (const m of members) {
      const id = memberId(m.taskIndex, m.rolloutIndex);
      const got = rewards.get(id)!;
      const own = untagged(m.row);
      const row: Record<string, unknown> = {
        ...own,
        reward: got.reward,
        ...(typeof own.reward === 'number' ? { verify_reward: own.reward } : {}),
        [GROUP_FIELD]: { member_id: id, members: members.length, num_repeats: this.opts.numRepeats, ...got.extra },
      };
      text += `${JSON.stringify({ ...row, _ng_task_index: m.taskIndex, _ng_rollout_index: m.rolloutIndex, _ng_agent: m.agent })}\n`;
      written.push({ member: m, row });
    }
    await this.opts.write(text, written);
    this.scoredGroups++;
  }

  /** Tasks with members held and not yet written or recorded (the queue collector keeps its read position before them). */
  heldTasks(): Set<number> {
    return new Set([...this.groups.keys(), ...this.scoringTasks]);
  }

  /** Waits for the groups being scored. Groups still waiting for members are left unscored (a rerun redoes them). */
  async drain(): Promise<void> {
    while (this.scoring.size > 0) await Promise.all([...this.scoring]);
  }

  /** Stops every deadline timer (the collection ends). */
  stop(): void {
    for (const g of this.groups.values()) if (g.timer) clearTimeout(g.timer);
  }
}

/** The rewards of a /verify_group answer by member id; anything but one finite reward per member is an error. */
function rewardsOf(answer: unknown, members: GroupMember[], server: string): Map<string, { reward: number; extra: Record<string, unknown> }> {
  const bad = (why: string) => new GroupVerifyError(`resources server \`${server}\` answered /verify_group with ${why}; expected {"members": [{"member_id": …, "reward": <number>}, …]} naming each member once`);
  const list = isDict(answer) ? (answer as Record<string, unknown>).members : undefined;
  if (!Array.isArray(list)) throw bad('no `members` list');
  const wanted = new Set(members.map((m) => memberId(m.taskIndex, m.rolloutIndex)));
  const out = new Map<string, { reward: number; extra: Record<string, unknown> }>();
  for (const item of list) {
    if (!isDict(item)) throw bad('a member that is not an object');
    const { member_id: id, reward, ...extra } = item as Record<string, unknown>;
    if (typeof id !== 'string' || !wanted.has(id)) throw bad(`an unknown member_id ${JSON.stringify(id)}`);
    if (out.has(id)) throw bad(`member ${id} twice`);
    if (typeof reward !== 'number' || !Number.isFinite(reward)) throw bad(`no finite reward for member ${id} (${JSON.stringify(reward)})`);
    out.set(id, { reward, extra });
  }
  if (out.size !== wanted.size) throw bad(`${out.size} of ${wanted.size} members`);
  return out;
}

/** Tasks whose rows in an earlier output were scored by their group (resume: never scored again). */
export class ScoredTasks {
  readonly tasks = new Set<number>();
  /** Called with every row of the earlier output. */
  see(row: Record<string, unknown>): void {
    if (typeof row._ng_task_index === 'number' && isDict(row[GROUP_FIELD])) this.tasks.add(row._ng_task_index);
  }
}
