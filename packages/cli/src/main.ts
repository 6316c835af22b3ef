/** Entry used by every bin script: `cli('run')` runs ng-run with process.argv. */
import { findCommand } from './commands/index.js';
import { runCli } from './runtime.js';

export async function cli(name: string, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const spec = findCommand(name);
  if (!spec) {
    process.stderr.write(`unknown command ${name}; run ng-help for the list\n`);
    process.exitCode = 2;
    return;
  }
  const code = await runCli(spec, argv);
  if (spec.name !== 'run' || code !== 0) process.exitCode = code;
}
