/**
 * ng-quickstart: the whole job on a fresh clone, no API key. Starts simple_weather,
 * simple_agent and the replay model, collects the example rollouts into JSONL, prints the
 * metrics and where the file is, and stops the servers.
 */
import { join } from 'node:path';
import { ServerClient } from '@nemo-gym/core/client';
import { findOpenPort, parseGlobalConfig, repoRoot } from '@nemo-gym/core/config';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import type { CommandSpec } from '../runtime.js';
import { ServerFleet } from './run.js';
import { progressLine } from './collect-rollouts.js';

export const QUICKSTART_CONFIGS = [
  'resources_servers/simple_weather/configs/simple_weather.yaml',
  'responses_api_models/replay_model/configs/replay_model.yaml',
];

export const quickstartCommand: CommandSpec = {
  name: 'quickstart',
  summary: 'Start simple_weather + simple_agent + the replay model and collect the example rollouts (no API key)',
  pnpmScript: 'quickstart',
  flags: [{ name: 'output_jsonl_fpath', type: 'str', description: 'where to write (default results/quickstart/simple_weather_rollouts.jsonl)' }],
  main: async (cliConfig) => {
    const root = repoRoot();
    const output = typeof cliConfig.output_jsonl_fpath === 'string' ? cliConfig.output_jsonl_fpath : join(root, 'results', 'quickstart', 'simple_weather_rollouts.jsonl');
    const headPort = await findOpenPort([]);
    const { config } = await parseGlobalConfig({ argv: [`+config_paths=[${QUICKSTART_CONFIGS.join(',')}]`, `+head_server.port=${headPort}`, '+head_server.host=127.0.0.1'], skipEnv: true });
    const fleet = new ServerFleet(config, { startupTimeoutS: 60, out: () => undefined });
    const started = Date.now();
    process.stdout.write('Starting simple_weather, simple_agent and the replay model...\n');
    try {
      await fleet.start();
      await fleet.waitReady();
      process.stdout.write(`${fleet.servers.length} servers ready in ${((Date.now() - started) / 1000).toFixed(2)} s\n${fleet.table()}\n\n`);
      const client = new ServerClient({ globalConfig: config });
      try {
        const summary = await collectRollouts({
          client,
          inputPath: join(root, 'resources_servers', 'simple_weather', 'data', 'example.jsonl'),
          outputPath: output,
          agentName: 'simple_weather_simple_agent',
          concurrency: 8,
          restart: true,
          onProgress: (p) => {
            if (p.done + p.failed === p.total) process.stdout.write(`${progressLine(p)}\n`);
          },
        });
        process.stdout.write(`\nMetrics:\n${JSON.stringify(summary.metrics, null, 4)}\n\n`);
        process.stdout.write(`Wrote ${summary.written} rollout(s) to ${summary.outputPath}\nMetrics file: ${summary.metricsPath}\n`);
        if (summary.failed) process.stderr.write(`${summary.failed} rollout(s) failed; see ${summary.failuresPath}\n`);
        process.stdout.write('\nNext: the same run with a real model is in the README ("Use a real model").\n');
        return summary.failed ? 1 : 0;
      } finally {
        await client.close();
      }
    } catch (err) {
      const tails = fleet.servers.filter((s) => s.exited).map((s) => fleet.describeFailure(s, 'stopped'));
      if (tails.length) process.stderr.write(`${tails.join('\n')}\n`);
      throw err;
    } finally {
      await fleet.stop();
    }
  },
};
