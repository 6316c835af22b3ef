/**
 * Aggregate metrics over rollout results: upstream's mean of every top-level numeric (and
 * boolean) field, and per-task pass@k / mean@k when each task was rolled out k > 1 times.
 */

export class MetricsAccumulator {
  private readonly sums = new Map<string, number>();
  private readonly counts = new Map<string, number>();
  private readonly perTask = new Map<number, number[]>();
  private readonly perAgent = new Map<string, MetricsAccumulator>();
  rows = 0;

  /** `trackTasks`: keep per-task rewards for pass@k (only useful with several rollouts per task). */
  constructor(private readonly trackTasks = true) {}

  add(result: Record<string, unknown>, taskIndex?: number, agent?: string, nested = true): void {
    this.rows++;
    for (const [k, v] of Object.entries(result)) {
      if (k.startsWith('_ng_')) continue;
      let x: number | undefined;
      if (typeof v === 'number' && Number.isFinite(v)) x = v;
      else if (typeof v === 'boolean') x = v ? 1 : 0;
      if (x === undefined) continue;
      this.sums.set(k, (this.sums.get(k) ?? 0) + x);
      this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    }
    const reward = typeof result.reward === 'number' ? result.reward : typeof result.reward === 'boolean' ? Number(result.reward) : 0;
    if (taskIndex !== undefined && this.trackTasks) {
      const list = this.perTask.get(taskIndex) ?? [];
      list.push(reward);
      this.perTask.set(taskIndex, list);
    }
    if (nested && agent) {
      let acc = this.perAgent.get(agent);
      if (!acc) this.perAgent.set(agent, (acc = new MetricsAccumulator(this.trackTasks)));
      acc.add(result, taskIndex, undefined, false);
    }
  }

  /** Mean of each numeric key over all rows (upstream divides by the row count; reward defaults to 0). */
  means(): Record<string, number> {
    const out: Record<string, number> = {};
    if (this.rows === 0) return out;
    for (const [k, s] of this.sums) out[k] = s / this.rows;
    if (!('reward' in out)) out.reward = 0;
    return out;
  }

  /** pass@k and mean@k over tasks (k = the number of rollouts each task has). */
  passAtK(): Record<string, number> | null {
    if (this.perTask.size === 0) return null;
    const ks = new Set([...this.perTask.values()].map((r) => r.length));
    if (ks.size !== 1) return null;
    const k = [...ks][0]!;
    if (k <= 1) return null;
    const rewards = [...this.perTask.values()];
    const binary = rewards.every((rs) => rs.every((r) => r === 0 || r === 1));
    const out: Record<string, number> = {};
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    out[`mean@${k}`] = mean(rewards.map(mean));
    for (const kk of [...new Set([1, k])]) {
      out[`pass@${kk}`] = mean(rewards.map((rs) => (binary ? passAtKUnbiased(rs.length, rs.filter((r) => r === 1).length, kk) : Math.max(...rs.slice(0, kk)))));
    }
    return out;
  }

  summary(): Record<string, unknown> {
    const out: Record<string, unknown> = { rows: this.rows, mean: this.means() };
    const pk = this.passAtK();
    if (pk) Object.assign(out, pk);
    if (this.perAgent.size > 1) {
      out.per_agent = Object.fromEntries([...this.perAgent].map(([a, acc]) => [a, { rows: acc.rows, mean: acc.means(), ...(acc.passAtK() ?? {}) }]));
    }
    return out;
  }
}

/** 1 - C(n - c, k) / C(n, k): the chance that at least one of k samples (of n, c correct) is correct. */
export function passAtKUnbiased(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}
