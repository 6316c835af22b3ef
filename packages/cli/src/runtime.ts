/** Shared plumbing of the ng-* commands: parse the config, run, report errors without stack traces. */
import { NgError, parseArgs, parseGlobalConfig, type ConfigDict, type ParseOptions } from '@nemo-gym/core';

export interface FlagSpec {
  name: string;
  type: string;
  description: string;
  required?: boolean;
}

export interface CommandSpec {
  /** Name without prefix, e.g. "run" for ng-run / ng_run. */
  name: string;
  summary: string;
  description?: string;
  flags?: FlagSpec[];
  /** Initial config dict (upstream's initial_global_config_dict). */
  initial?: ConfigDict;
  /** Skip server-port allocation when the command starts no server. */
  main: (config: ConfigDict, argv: readonly string[]) => Promise<number>;
}

export function formatHelp(spec: CommandSpec): string {
  const lines = [`ng-${spec.name} (also ng_${spec.name}): ${spec.summary}`];
  if (spec.description) lines.push('', spec.description);
  lines.push('', 'Parameters (give them as +name=value):');
  const flags = spec.flags ?? [];
  if (flags.length === 0) lines.push('  There are no arguments to this CLI command!');
  const width = Math.max(0, ...flags.map((f) => `${f.name} (${f.type})`.length));
  for (const f of flags) lines.push(`  - ${`${f.name} (${f.type})`.padEnd(width)}  ${f.required ? '[required] ' : ''}${f.description}`);
  lines.push(
    '',
    'Every command also takes the config options: "+config_paths=[a.yaml,b.yaml]" (or --config a.yaml),',
    '+key=value / ++key=value / ~key overrides (or --set key=value), and env.yaml at the repo root.',
  );
  return lines.join('\n');
}

function isTruthy(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false && v !== 0 && v !== '' && v !== 'false';
}

export async function runCli(spec: CommandSpec, argv: readonly string[] = process.argv.slice(2), parseOptions: ParseOptions = {}): Promise<number> {
  try {
    const args = parseArgs(argv);
    const helpAsked = args.help || args.overrides.some((o) => (o.key === 'h' || o.key === 'help') && o.kind !== 'delete' && isTruthy((o as { value: unknown }).value));
    if (helpAsked) {
      process.stdout.write(`${formatHelp(spec)}\n`);
      return 0;
    }
    const { config } = await parseGlobalConfig({ args, initial: spec.initial, ...parseOptions });
    for (const f of spec.flags ?? []) {
      if (f.required && (config[f.name] === undefined || config[f.name] === null || config[f.name] === '')) {
        throw new NgError('NG_ERR_USAGE', `ng-${spec.name} needs +${f.name}=<${f.type}>: ${f.description}. See \`ng-${spec.name} --help\`.`);
      }
    }
    return await spec.main(config, argv);
  } catch (err) {
    if (err instanceof NgError) {
      process.stderr.write(`ng-${spec.name}: ${err.message}\n`);
      return err.code === 'NG_ERR_USAGE' ? 2 : 1;
    }
    process.stderr.write(`ng-${spec.name}: unexpected error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    return 1;
  }
}

export function exitWith(code: Promise<number>): void {
  code.then(
    (c) => {
      process.exitCode = c;
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
