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
