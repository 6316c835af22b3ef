/**
 * The logger every server gets (`ctx.log`), on pino: levels (`+log_level=debug|info|warn|error`,
 * default info), every logged value passed through the project's one secret rule (secret-looking
 * keys masked, credentials in URLs scrubbed), and one line per record: stdout for debug and info,
 * stderr for warnings and errors, in the plain form ng-run prefixes with the instance name
 * (`+log_format=json` writes pino's JSON lines instead).
 *
 * Request lines: every failed request (status ≥ 400) is one warning line with its method, route,
 * status and duration; at debug level every request is. A successful request at info level costs
 * a variable read and one comparison on the fast path, nothing else (see fast-path.ts).
 */
import pino, { type Logger as PinoLogger } from 'pino';
import { redactSecrets } from '../config/redact.js';
import { GLOBAL_SETTINGS } from '../config/settings.js';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  debug(msg: string): void;
  /** Whether every request is logged (debug level). */
  readonly requestsAll: boolean;
  /** One request line: a warning when it failed (status ≥ 400), else at debug level. */
  request(method: string, url: string, status: number, ms: number): void;
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  /** `json`: pino's JSON lines as they are. */
  format?: 'plain' | 'json';
  /** Values to mask wherever they appear (the server's own keys: see collectSecretValues). */
  secrets?: Iterable<string>;
  /** Where lines go (tests); default stdout for debug/info, stderr for warn/error. */
  write?: (line: string, level: number) => void;
}

/** The level and format from the config (`log_level`, `log_format`), with the one check. */
export function loggerOptionsFrom(config: Record<string, unknown>): LoggerOptions {
  const level = config.log_level;
  const format = config.log_format;
  return {
    level: typeof level === 'string' && (LOG_LEVELS as readonly string[]).includes(level.toLowerCase()) ? (level.toLowerCase() as LogLevel) : GLOBAL_SETTINGS.log_level.default,
    format: format === 'json' ? 'json' : GLOBAL_SETTINGS.log_format.default,
  };
}

const TAG: Record<number, string> = { 20: 'DEBUG: ', 30: '', 40: 'WARNING: ', 50: 'ERROR: ' };
const FIELDS_SHOWN = ['method', 'route', 'status', 'ms'] as const;

/** Renders one pino JSON record as a plain line. */
function plainLine(prefix: string, json: string): { line: string; level: number } {
  const rec = JSON.parse(json) as Record<string, unknown> & { level: number; msg?: string };
  const extra = Object.keys(rec).filter((k) => !['level', 'time', 'pid', 'hostname', 'name', 'msg', ...FIELDS_SHOWN].includes(k));
  const tail = extra.length ? ` ${extra.map((k) => `${k}=${JSON.stringify(rec[k])}`).join(' ')}` : '';
  return { line: `${prefix}${TAG[rec.level] ?? ''}${rec.msg ?? ''}${tail}\n`, level: rec.level };
}

export function makeLogger(name: string, options: LoggerOptions = {}): Logger {
  // Under ng-run every line is already prefixed with the instance name.
  const prefix = process.env.NEMO_GYM_LOG_PREFIXED ? '' : `(${name}) `;
  const json = options.format === 'json';
  const secrets = [...(options.secrets ?? [])];
  const out =
    options.write ??
    ((line: string, level: number) => {
      if (level >= 40) process.stderr.write(line);
      else process.stdout.write(line);
    });
  const destination = {
    write(record: string) {
      if (json) out(record, (JSON.parse(record) as { level: number }).level);
      else {
        const { line, level } = plainLine(prefix, record);
        out(line, level);
      }
    },
  };
  const p: PinoLogger = pino(
    {
      name,
      level: options.level ?? 'info',
      base: json ? { name } : null,
      timestamp: json ? pino.stdTimeFunctions.isoTime : false,
      formatters: { log: (obj) => redactSecrets(obj, secrets) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redactSecrets(a, secrets) : a)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
  const requestsAll = p.isLevelEnabled('debug');
  return {
    info: (msg) => p.info(msg),
    warn: (msg) => p.warn(msg),
    error: (msg) => p.error(msg),
    debug: (msg) => p.debug(msg),
    requestsAll,
    request(method, url, status, ms) {
      const route = url.split('?')[0] ?? url;
      const fields = { method, route, status, ms: Math.round(ms * 10) / 10 };
      const msg = `${method} ${route} ${status} ${fields.ms} ms`;
      if (status >= 400) p.warn(fields, `request failed: ${msg}`);
      else p.debug(fields, msg);
    },
  };
}
