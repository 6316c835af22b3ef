/** Entry used by every bin script: `cli('run')` runs ng-run with process.argv. */
import { findCommand } from './commands/index.js';
import type { ParseOptions } from '@nemo-gym/core/config';
import { NgError } from '@nemo-gym/core/errors';
import { embeddedParseOptions } from './embedded.js';
import { exitCodeOf, runCli } from './runtime.js';

/** A reader that went away (`ng-run --help | head`) ends the output, not the command with a stack trace. */
function quietOnClosedPipe(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
}

export async function cli(name: string, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  process.stdout.on('error', quietOnClosedPipe);
  const spec = findCommand(name);
  if (!spec) {
    process.stderr.write(`unknown command ${name}; run ng-help for the list\n`);
    process.exitCode = 2;
    return;
  }
  let parseOptions: ParseOptions;
  try {
    parseOptions = embeddedParseOptions();
  } catch (err) {
    if (!(err instanceof NgError)) throw err;
    process.stderr.write(`ng-${spec.name}: ${err.message}\n`);
    process.exitCode = exitCodeOf(err);
    return;
  }
  const code = await runCli(spec, argv, parseOptions);
  if (spec.name !== 'run' || code !== 0) process.exitCode = code;
}
