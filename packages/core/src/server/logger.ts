/** The line logger every server gets (`ctx.log`): stdout for info, stderr for warnings and errors. */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export function makeLogger(name: string): Logger {
  // Under ng-run every line is already prefixed with the instance name.
  const prefix = process.env.NEMO_GYM_LOG_PREFIXED ? '' : `(${name}) `;
  const line = (level: string, msg: string) => `${prefix}${level}${msg}\n`;
  return {
    info: (msg) => void process.stdout.write(line('', msg)),
    warn: (msg) => void process.stderr.write(line('WARNING: ', msg)),
    error: (msg) => void process.stderr.write(line('ERROR: ', msg)),
  };
}
