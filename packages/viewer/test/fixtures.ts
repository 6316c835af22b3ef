/** Rollout rows for the viewer tests, written by hand in the shape ng-collect-rollouts produces. */
import { writeFileSync } from 'node:fs';

const tool = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true, type: 'function', description: 'Weather' };

export function rollout(
  i: number,
  opts: { reward: number; user?: string; output?: unknown[]; extra?: Record<string, unknown>; paramsExtra?: Record<string, unknown> },
): Record<string, unknown> {
  return {
    responses_create_params: {
      input: [
        { role: 'developer', content: 'You are a helpful assistant.', type: 'message' },
        { role: 'user', content: opts.user ?? `What is the weather in city ${i}?`, type: 'message' },
      ],
      tools: [tool],
      temperature: 0.7,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      ...opts.paramsExtra,
    },
    response: {
      id: `resp_${String(i).padStart(6, '0')}`,
      created_at: 1757449892.0,
      model: 'test-model',
      object: 'response',
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [tool],
      output: opts.output ?? [
        { id: `rs_${i}`, type: 'reasoning', summary: [{ text: `Thinking about city ${i}`, type: 'summary_text' }] },
        { arguments: JSON.stringify({ city: `city ${i}` }), call_id: `call_${i}`, name: 'get_weather', type: 'function_call', id: `fc_${i}`, status: 'completed' },
        { call_id: `call_${i}`, output: JSON.stringify({ city: `city ${i}`, weather_description: 'cold' }), type: 'function_call_output' },
        { id: `msg_${i}`, role: 'assistant', status: 'completed', type: 'message', content: [{ type: 'output_text', text: `It is cold in city ${i}.`, annotations: [] }] },
      ],
    },
    reward: opts.reward,
    ...opts.extra,
  };
}

export const XSS_USER = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> héllo';
export const XSS_TOOL_OUTPUT = '<img src=x onerror="window.__xss = 3">';

/** 12 rows: rewards 1,0,0.5 pattern; row 4 carries markup; row 7 is not JSON. */
export function writeSmallFile(path: string): string[] {
  const lines: string[] = [];
  for (let i = 0; i < 12; i++) {
    if (i === 7) {
      lines.push('{"this is": not json');
      continue;
    }
    const reward = [1, 0, 0.5][i % 3]!;
    const extra = { accuracy: reward === 1, category: ['a', 'b', 'c'][i % 3], set_overlap: reward / 2 };
    if (i === 4) {
      lines.push(
        JSON.stringify(
          rollout(i, {
            reward,
            user: XSS_USER,
            extra,
            output: [
              { arguments: '{"city": "<b>x</b>"}', call_id: 'call_x', name: 'get_weather', type: 'function_call', id: 'fc_x', status: 'completed' },
              { call_id: 'call_x', output: XSS_TOOL_OUTPUT, type: 'function_call_output' },
              { id: 'msg_x', role: 'assistant', status: 'completed', type: 'message', content: [{ type: 'output_text', text: '<iframe src="javascript:window.__xss=4"></iframe>', annotations: [] }] },
            ],
          }),
        ).replace('héllo', 'h\\u00e9llo'),
      );
      continue;
    }
    // Row 9 carries a create-params key outside the strict schema.
    lines.push(JSON.stringify(rollout(i, { reward, extra, ...(i === 9 ? { paramsExtra: { seed: 5 } } : {}) })));
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
  return lines;
}

/** Per task: its agent and the rewards of its rollouts, in rollout order. */
export interface TaskPlan {
  agent: string;
  rewards: number[];
}

/**
 * A collector-style output file: each row tagged `_ng_task_index`, `_ng_rollout_index`, `_ng_agent`
 * after the verify fields (as ng-collect-rollouts writes them), rows in an interleaved completion
 * order. `failures` are written to the `_failures.jsonl` file beside it.
 */
export function writeTaggedFile(
  path: string,
  plan: Record<number, TaskPlan>,
  failures: { task: number; rollout: number; agent: string; reason: string }[] = [],
): void {
  const lines: string[] = [];
  const tasks = Object.keys(plan).map(Number);
  const longest = Math.max(...tasks.map((t) => plan[t]!.rewards.length));
  for (let r = 0; r < longest; r++) {
    for (const t of [...tasks].reverse()) {
      const p = plan[t]!;
      if (r >= p.rewards.length) continue;
      const reward = p.rewards[r]!;
      const row = rollout(t, { reward, user: `Task ${t}: what is the weather in city ${t}?`, extra: { accuracy: reward === 1, set_overlap: reward / 2 } });
      (row.response as { id: string }).id = `resp_t${t}_r${r}`;
      lines.push(JSON.stringify({ ...row, _ng_task_index: t, _ng_rollout_index: r, _ng_agent: p.agent }));
    }
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
  if (failures.length) {
    const recs = failures.map((f) => ({
      _ng_task_index: f.task,
      _ng_rollout_index: f.rollout,
      line: f.task + 1,
      agent: f.agent,
      attempts: 1,
      reason: f.reason,
      status: null,
      history: [{ attempt: 1, started_at: '2026-01-01T00:00:00.000Z', reason: f.reason, status: null, delivered: 'no', http_attempts: 1 }],
    }));
    writeFileSync(path.replace(/\.jsonl$/, '_failures.jsonl'), `${recs.map((r) => JSON.stringify(r)).join('\n')}\n`);
  }
}

/** Run A: six tasks, two agents, k = 4 (task 5 has one rollout recorded as failed). */
export const PLAN_A: Record<number, TaskPlan> = {
  0: { agent: 'simple_agent', rewards: [1, 1, 1, 1] },
  1: { agent: 'other_agent', rewards: [0, 0, 0, 0] },
  2: { agent: 'simple_agent', rewards: [1, 0, 0, 1] },
  3: { agent: 'other_agent', rewards: [0, 1, 0, 0] },
  4: { agent: 'simple_agent', rewards: [0, 0, 0, 0] },
  5: { agent: 'other_agent', rewards: [1, 1, 0] },
};
export const FAILURES_A = [
  // Completed by a later run (its row is in the file): not a standing failure.
  { task: 2, rollout: 1, agent: 'simple_agent', reason: 'the agent did not answer within 60 s' },
  { task: 5, rollout: 3, agent: 'other_agent', reason: 'could not reach the model backend: ECONNREFUSED' },
];
/** Run B: task 4 missing, task 6 new; deltas B − A: t0 0, t1 +0.25, t2 −0.5, t3 +0.75, t5 +1/3. */
export const PLAN_B: Record<number, TaskPlan> = {
  0: { agent: 'simple_agent', rewards: [1, 1, 1, 1] },
  1: { agent: 'other_agent', rewards: [1, 0, 0, 0] },
  2: { agent: 'simple_agent', rewards: [0, 0, 0, 0] },
  3: { agent: 'other_agent', rewards: [1, 1, 1, 1] },
  5: { agent: 'other_agent', rewards: [1, 1, 1, 1] },
  6: { agent: 'simple_agent', rewards: [1, 0, 1, 0] },
};

/** Where the browser tests keep their screenshots (git-ignored, kept after the run). */
export const ARTIFACTS = new URL('../test-artifacts/', import.meta.url).pathname;

/** Token fields of the fixture's two model calls, and the sequence `ng-export +format=rl` writes from them. */
export const TOKENS = {
  first: { prompt_token_ids: [1, 2, 3, 4], generation_token_ids: [10, 11, 12], generation_log_probs: [-0.1, -0.2, -0.3] },
  second: { prompt_token_ids: [1, 2, 3, 4, 10, 11, 12, 20, 21], generation_token_ids: [30, 31], generation_log_probs: [-0.5, -0.25] },
  input_ids: [1, 2, 3, 4, 10, 11, 12, 20, 21, 30, 31],
  loss_mask: [0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1],
  logprobs: [0, 0, 0, 0, -0.1, -0.2, -0.3, 0, 0, -0.5, -0.25],
};

/** The numbers a chart run's row of task `t` carries (so tests can compute what each chart must show). */
export const chartFacts = (t: number) => ({
  outputTokens: 20 + 10 * t,
  inputTokens: 100 + t,
  latencyS: 1 + t,
  category: t % 2 === 0 ? 'even' : 'odd',
  /** Task 1's failed rollouts hit a tool error. */
  toolError: (reward: number) => t === 1 && reward === 0,
});

/**
 * A collector-style file for the charts: rows as `writeTaggedFile` writes them plus usage, timing
 * (`created_at` / `completed_at`), a `category` verify field, token ids on the model calls' last
 * items, and a tool error on task 1's failed rollouts.
 */
export function writeChartFile(path: string, plan: Record<number, TaskPlan>): void {
  const lines: string[] = [];
  for (const [t, p] of Object.entries(plan).map(([k, v]) => [Number(k), v] as const)) {
    const f = chartFacts(t);
    p.rewards.forEach((reward, r) => {
      const err = f.toolError(reward);
      const output = [
        { id: `rs_${t}`, type: 'reasoning', summary: [{ text: `Thinking about city ${t}`, type: 'summary_text' }] },
        { arguments: JSON.stringify({ city: `city ${t}` }), call_id: `call_${t}_${r}`, name: 'get_weather', type: 'function_call', id: `fc_${t}`, status: 'completed', ...TOKENS.first },
        { call_id: `call_${t}_${r}`, output: err ? '{"error": "unknown city"}' : JSON.stringify({ city: `city ${t}`, weather_description: 'cold' }), type: 'function_call_output' },
        { id: `msg_${t}`, role: 'assistant', status: 'completed', type: 'message', content: [{ type: 'output_text', text: `It is cold in city ${t}.`, annotations: [] }], ...TOKENS.second },
      ];
      const row = rollout(t, { reward, output, user: `Task ${t}: what is the weather in city ${t}?`, extra: { accuracy: reward === 1, category: f.category } });
      const response = row.response as Record<string, unknown>;
      response.id = `resp_t${t}_r${r}`;
      response.created_at = 1_757_449_000 + r;
      response.completed_at = 1_757_449_000 + r + f.latencyS;
      response.usage = { input_tokens: f.inputTokens, output_tokens: f.outputTokens, total_tokens: f.inputTokens + f.outputTokens };
      lines.push(JSON.stringify({ ...row, _ng_task_index: t, _ng_rollout_index: r, _ng_agent: p.agent }));
    });
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** Run C: a third checkpoint for comparing three runs. */
export const PLAN_C: Record<number, TaskPlan> = {
  0: { agent: 'simple_agent', rewards: [1, 1, 0, 1] },
  1: { agent: 'other_agent', rewards: [1, 1, 0, 0] },
  2: { agent: 'simple_agent', rewards: [1, 1, 1, 1] },
  3: { agent: 'other_agent', rewards: [0, 0, 0, 0] },
};

/**
 * A run with masked samples and reward components, per task: its agent and its rollouts, each
 * `C` (correct), `F` (well formatted), `CF` (both), `-` (neither), or `M:<failure_reason>` (a masked
 * sample: reward 1 and both components, which no reward figure may count). Components:
 * correctness 0.8 when correct, format 0.2 when formatted; reward = their sum. Task 0's unmasked
 * rows carry `used_tool: true` (a field the other rows lack).
 */
export const MASKED_PLAN: Record<number, { agent: string; rollouts: string[] }> = {
  0: { agent: 'simple_agent', rollouts: ['CF', 'CF', 'F', 'M:capture_incomplete'] },
  1: { agent: 'other_agent', rollouts: ['-', 'F', 'C', 'M:max_iteration'] },
  2: { agent: 'simple_agent', rollouts: ['CF', '-', 'M:capture_incomplete', 'C'] },
  3: { agent: 'other_agent', rollouts: ['-', '-', 'F', 'F'] },
};

/** The components and reward of one rollout of `MASKED_PLAN`, and its failure reason when masked. */
export function maskedFacts(code: string): { correctness: number; format: number; reward: number; reason: string | null } {
  const reason = code.startsWith('M:') ? code.slice(2) : null;
  const correctness = reason !== null || code.includes('C') ? 0.8 : 0;
  const format = reason !== null || code.includes('F') ? 0.2 : 0;
  return { correctness, format, reward: Number((correctness + format).toFixed(10)), reason };
}

export function writeMaskedFile(path: string): void {
  const lines: string[] = [];
  for (const [t, p] of Object.entries(MASKED_PLAN).map(([k, v]) => [Number(k), v] as const)) {
    p.rollouts.forEach((code, r) => {
      const f = maskedFacts(code);
      const extra: Record<string, unknown> = { reward_components: { correctness: f.correctness, format: f.format } };
      if (f.reason !== null) Object.assign(extra, { mask_sample: true, failure_reason: f.reason });
      else if (t === 0) extra.used_tool = true;
      const row = rollout(t, { reward: f.reward, user: `Task ${t}: what is the weather in city ${t}?`, extra });
      (row.response as { id: string }).id = `resp_t${t}_r${r}`;
      lines.push(JSON.stringify({ ...row, _ng_task_index: t, _ng_rollout_index: r, _ng_agent: p.agent }));
    });
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}
