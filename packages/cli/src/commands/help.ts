/** ng-help: the list of commands. */
import type { CommandSpec } from '../runtime.js';

export const helpCommand: CommandSpec = {
  name: 'help',
  summary: 'List the ng-* commands',
  main: async () => {
    const { COMMANDS } = await import('./index.js');
    const width = Math.max(...COMMANDS.map((c) => `ng-${c.name}`.length));
    const lines = ['Run a command with --help (or +h=true) to see its parameters.', '', 'Available commands (each also as ng_<name> and through `pnpm ng-<name>`):', '-'.repeat(40)];
    for (const c of COMMANDS) lines.push(`  ${`ng-${c.name}`.padEnd(width)}  ${c.summary}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
