/**
 * Shared plumbing of the ng-* commands. Each command is one commander program: its description,
 * the conventional options (--config, --set, --help) and the Hydra-style settings as a variadic
 * argument. The settings are not interpreted here: they go, in order, to the config parser of
 * @nemo-gym/core (`parseOverride`, `parseGlobalConfig`), which merges them with the config files
 * and env.yaml; then every +key must be known (params.ts). Errors are reported as one message
 * without a stack trace; so are file-system errors (EACCES, ENOSPC, …: the path, the cause, the fix).
 */
import { Command, CommanderError } from 'commander';
import { GLOBAL_SETTING_NAMES, GLOBAL_SETTINGS, parseGlobalConfig, parseOverride, type ConfigDict, type GlobalSetting, type Override, type ParsedArgs, type ParseOptions } from '@nemo-gym/core/config';
import { NgError, UsageError } from '@nemo-gym/core/errors';
import { fileErrorLine, isFsError } from '@nemo-gym/core/files';
import { checkParameters } from './params.js';

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
  /** The command's own settings, given as +name=value. */
  flags?: FlagSpec[];
  /** The root package.json script that runs it (default `ng-<name>`), for `pnpm <script>`. */
  pnpmScript?: string;
  /** Initial config dict (upstream's initial_global_config_dict). */
  initial?: ConfigDict;
  /** The command reads only part of the config: references to servers not in it are not refused. */
  partialConfig?: boolean;
  main: (config: ConfigDict, argv: readonly string[]) => Promise<number>;
}

/** Exit code of a usage error (a wrong flag or setting), as most command-line tools use. */
export const USAGE_EXIT_CODE = 2;

/**
 * Codes of the errors that mean the command was given something it cannot use — a flag, a
 * setting, a config file, or a collection whose pre-flight or files are refused before it starts —
 * and did nothing: exit {@link USAGE_EXIT_CODE}. Every other error that stops a command is a
 * failure of the run: exit 1.
 */
const USAGE_CODES: ReadonlySet<string> = new Set(['NG_ERR_USAGE', 'NG_ERR_CONFIG', 'NG_ERR_PREPARE_CONFIG', 'NG_ERR_PREFLIGHT', 'NG_ERR_COLLECT_FILE']);

/** The one exit rule of the ng-* commands: 2 for usage and config problems, 1 for a run that failed. */
export function exitCodeOf(err: unknown): number {
  return err instanceof NgError && USAGE_CODES.has(err.code) ? USAGE_EXIT_CODE : 1;
}

/** Every name the command runs under: the bins of packages/cli (ng-x, ng_x, nemo_gym_x). */
export function commandNames(spec: CommandSpec): string[] {
  const snake = spec.name.replace(/-/g, '_');
  return [`ng-${spec.name}`, `ng_${snake}`, `nemo_gym_${snake}`];
}

export function pnpmScriptOf(spec: CommandSpec): string {
  return spec.pnpmScript ?? `ng-${spec.name}`;
}

function parametersHelp(spec: CommandSpec): string {
  const lines = ['', 'Parameters (give them as +name=value):'];
  const flags = spec.flags ?? [];
  if (flags.length === 0) lines.push('  There are no parameters to this command.');
  const width = Math.max(0, ...flags.map((f) => `${f.name} (${f.type})`.length));
  for (const f of flags) lines.push(`  - ${`${f.name} (${f.type})`.padEnd(width)}  ${f.required ? '[required] ' : ''}${f.description}`);
  const [, ...aliases] = commandNames(spec);
  lines.push('', ...globalSettingsHelp());
  lines.push(
    '',
    'Settings: "+config_paths=[a.yaml,b.yaml]" names the config files; +key=value adds a key, ++key=value adds or',
    'overrides it, ~key deletes it; dotted keys reach inside (+a.b.c=1); values are typed (null, true, 3, 0.5,',
    '[a,b], {k: v}, quoted strings). env.yaml at the repository root is read first.',
    '',
    `Also runs as ${aliases.join(' and ')}; from the repository root: pnpm ${pnpmScriptOf(spec)}.`,
  );
  return lines.join('\n');
}

/** A setting's type and default as help shows them: `float, default 30`. */
export function settingSummary(setting: GlobalSetting): string {
  return setting.default === null ? setting.type : `${setting.type}, default ${JSON.stringify(setting.default)}`;
}

/** The help's list of the global settings, from their one declaration (core/config GLOBAL_SETTINGS). */
function globalSettingsHelp(): string[] {
  const own = GLOBAL_SETTING_NAMES.filter((n) => !(GLOBAL_SETTINGS[n] as GlobalSetting).upstreamOnly);
  const upstream = GLOBAL_SETTING_NAMES.filter((n) => (GLOBAL_SETTINGS[n] as GlobalSetting).upstreamOnly);
  const heads = own.map((n) => `${n} (${settingSummary(GLOBAL_SETTINGS[n])})`);
  const width = Math.min(48, Math.max(...heads.map((h) => h.length)));
  return [
    'Global settings (every command takes them as +name=value; ng-dump-config +settings=true prints their values):',
    ...own.map((n, i) => `  - ${heads[i]!.padEnd(width)}  ${GLOBAL_SETTINGS[n].doc}`),
    `  Accepted for upstream's configs, unused here: ${upstream.join(', ')}.`,
  ];
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The commander program of one ng-* command (it neither exits nor prints errors itself). */
export function commandProgram(spec: CommandSpec): Command {
  return new Command(`ng-${spec.name}`)
    .description(spec.description ? `${spec.summary}\n\n${spec.description}` : spec.summary)
    .argument('[settings...]', 'Hydra-style settings: +key=value, ++key=value, ~key, "+config_paths=[a.yaml,b.yaml]"')
    .option('-c, --config <path>', 'a config file (repeatable; appended to config_paths)', collect)
    .option('--set <key=value>', 'a setting, the same as ++key=value (repeatable)', collect)
    .helpOption('-h, --help', 'print this help (so does +h=true)')
    .addHelpText('after', parametersHelp(spec))
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
      outputError: () => undefined,
    });
}

function isTruthy(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false && v !== 0 && v !== '' && v !== 'false';
}

function helpAsked(overrides: readonly Override[]): boolean {
  return overrides.some((o) => (o.key === 'h' || o.key === 'help') && o.kind !== 'delete' && isTruthy(o.value));
}

/** Commander's own parse errors, in the words the command line used before. */
function usageErrorOf(err: CommanderError, spec: CommandSpec): UsageError {
  const flag = /'([^']+)'/.exec(err.message)?.[1] ?? '';
  const hint = /\(Did you mean ([^)?]+)\?\)/.exec(err.message)?.[1];
  if (err.code === 'commander.unknownOption') {
    return new UsageError(
      `Unknown flag \`${flag}\`.${hint ? ` Did you mean \`${hint}\`?` : ''} Settings are given as \`+key=value\` (or \`--set key=value\`); config files as \`"+config_paths=[a.yaml]"\` or \`--config a.yaml\`. See \`ng-${spec.name} --help\`.`,
    );
  }
  if (err.code === 'commander.optionMissingArgument') {
    const long = /--[a-z-]+/.exec(flag)?.[0] ?? flag;
    return new UsageError(`Flag ${long} needs a value, e.g. \`${long} ${long === '--config' ? 'configs/x.yaml' : 'key=value'}\`.`);
  }
  return new UsageError(`${err.message.replace(/^error: /, '')}. See \`ng-${spec.name} --help\`.`);
}

/** Runs one command on a command line; resolves with the exit code. */
export async function runCli(spec: CommandSpec, argv: readonly string[] = process.argv.slice(2), parseOptions: ParseOptions = {}): Promise<number> {
  const program = commandProgram(spec);
  let code = 0;
  program.action(async (settings: string[], opts: { config?: string[]; set?: string[] }) => {
    const overrides = [...settings.map(parseOverride), ...(opts.set ?? []).map((kv) => parseOverride(`++${kv}`))];
    if (helpAsked(overrides)) {
      program.outputHelp();
      return;
    }
    const args: ParsedArgs = { overrides, configFiles: opts.config ?? [], help: false };
    const parsed = await parseGlobalConfig({ args, initial: spec.initial, ...(spec.partialConfig ? { checkServerRefs: false } : {}), ...parseOptions });
    const config = parsed.config;
    checkParameters(spec, overrides, {
      config,
      instanceNames: parsed.instances.map((i) => i.name),
      initial: spec.initial,
      envPath: parseOptions.envPath,
      skipEnv: parseOptions.skipEnv,
    });
    for (const f of spec.flags ?? []) {
      if (f.required && (config[f.name] === undefined || config[f.name] === null || config[f.name] === '')) {
        throw new UsageError(`ng-${spec.name} needs +${f.name}=<${f.type}>: ${f.description}. See \`ng-${spec.name} --help\`.`);
      }
    }
    code = await spec.main(config, argv);
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (caught) {
    let err = caught;
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return 0;
      err = usageErrorOf(err, spec);
    }
    if (err instanceof NgError) {
      process.stderr.write(`ng-${spec.name}: ${err.message}\n`);
      return exitCodeOf(err);
    }
    // A file error no command worded itself (a full disk, permissions): one line naming the path and the fix.
    if (isFsError(err)) {
      process.stderr.write(`ng-${spec.name}: ${fileErrorLine(err)}\n`);
      return 1;
    }
    process.stderr.write(`ng-${spec.name}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

/**
 * The node flags every server process starts with: a young generation larger than node's default,
 * then NEMO_GYM_NODE_ARGS (e.g. "--max-old-space-size=8192" or "--cpu-prof"), which may set its own
 * size. A server with hundreds of requests in flight keeps their state alive across scavenges, and
 * each scavenge copies it: at 512 rollouts in flight simple_agent spent 55 µs per rollout in
 * scavenges with 32 MB semi-spaces and 22 µs with 64 MB. V8 grows the young generation to this
 * size only under such an allocation rate; an idle server stays small.
 */
export const DEFAULT_SERVER_NODE_ARGS: readonly string[] = ['--max-semi-space-size=64'];

export function serverNodeArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env.NEMO_GYM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const own = extra.some((a) => a.startsWith('--max-semi-space-size'));
  return [...(own ? [] : DEFAULT_SERVER_NODE_ARGS), ...extra];
}
