/** ng-help: the list of commands. */
import { commandNames, pnpmScriptOf, type CommandSpec } from '../runtime.js';

export const helpCommand: CommandSpec = {
  name: 'help',
  summary: 'List the ng-* commands',
  main: async () => {
    const { COMMANDS } = await import('./index.js');
    const width = Math.max(...COMMANDS.map((c) => `ng-${c.name}`.length));
    const lines = [
      'Run a command with --help (or +h=true) to see its parameters.',
      '',
      'Available commands (each also as ng_<name> and nemo_gym_<name> with underscores, e.g. ng_collect_rollouts;',
      'from the repository root through pnpm, e.g. `pnpm ng-run` or `pnpm exec ng_run`):',
      '-'.repeat(40),
    ];
    for (const c of COMMANDS) {
      const script = pnpmScriptOf(c);
      lines.push(`  ${`ng-${c.name}`.padEnd(width)}  ${c.summary}${script === commandNames(c)[0] ? '' : ` (pnpm ${script})`}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
