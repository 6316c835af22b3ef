/** Config paths from upstream's README that name its old server folders resolve to the renamed servers, with one notice each. */
import { describe, expect, it } from 'vitest';
import { parseGlobalConfig } from '@nemo-gym/core/config';

async function load(path: string): Promise<{ notes: string[]; config: Record<string, unknown> }> {
  const notes: string[] = [];
  const { config } = await parseGlobalConfig({
    skipEnv: true,
    findPort: async () => 20000,
    warn: (t) => notes.push(t),
    argv: [`+config_paths=[${path}]`],
    checkServerRefs: false,
    initial: { policy_base_url: 'http://127.0.0.1:1/v1', policy_api_key: 'k', policy_model_name: 'm' },
  });
  return { notes, config };
}

describe("upstream's renamed server folders", () => {
  it.each([
    ['resources_servers/library_judge_math/configs/library_judge_math.yaml', 'resources_servers/math_with_judge/configs/library_judge_math.yaml', 'library_judge_math_simple_agent'],
    ['resources_servers/library_judge_math/configs/dapo17k.yaml', 'resources_servers/math_with_judge/configs/dapo17k.yaml', 'library_judge_math_simple_agent'],
    ['resources_servers/python_math_exec/configs/python_math_exec.yaml', 'resources_servers/math_with_code/configs/math_with_code.yaml', 'math_with_code_simple_agent'],
  ])('%s is read from %s', async (upstream, here, agent) => {
    const { notes, config } = await load(upstream);
    expect(notes).toEqual([`Note: ${upstream} is ${here} here (upstream's server folder was renamed).`]);
    expect(config.config_paths).toEqual([here]);
    expect(Object.keys(config)).toContain(agent);
  });

  it('leaves other missing paths to the usual error', async () => {
    await expect(load('resources_servers/library_judge_math/configs/nope.yaml')).rejects.toThrow(/Config file not found: .*library_judge_math\/configs\/nope\.yaml/);
  });
});
