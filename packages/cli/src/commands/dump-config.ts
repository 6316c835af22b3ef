/** ng-dump-config: the merged config, interpolations resolved, secrets redacted; or the global settings' values. */
import { stringify } from 'yaml';
import { collectSecretValues, GLOBAL_SETTING_NAMES, GLOBAL_SETTINGS, redactSecrets, resolveAll, InterpolationError, settingValue, type ConfigDict } from '@nemo-gym/core/config';
import { ConfigError } from '@nemo-gym/core/errors';
import { settingSummary, type CommandSpec } from '../runtime.js';

/** One line per global setting: its name, its value in the config (or its default), its type and default, its doc. */
function settingsLines(config: ConfigDict): string {
  const values = redactSecrets(Object.fromEntries(GLOBAL_SETTING_NAMES.map((n) => [n, settingValue(config, n)])), collectSecretValues(config)) as ConfigDict;
  return GLOBAL_SETTING_NAMES.map((n) => `${n}: ${JSON.stringify(values[n])}  # ${settingSummary(GLOBAL_SETTINGS[n])}; ${GLOBAL_SETTINGS[n].doc}\n`).join('');
}

export const dumpConfigCommand: CommandSpec = {
  name: 'dump-config',
  summary: 'Print the merged config (interpolations resolved, secrets shown as ****)',
  flags: [{ name: 'settings', type: 'bool', description: 'print the global settings instead: each one\'s value (or default), type and doc' }],
  main: async (config) => {
    let resolved;
    try {
      resolved = resolveAll(config);
    } catch (err) {
      if (err instanceof InterpolationError) throw new ConfigError(err.message);
      throw err;
    }
    if (resolved.settings === true) {
      process.stdout.write(settingsLines(resolved));
      return 0;
    }
    process.stdout.write(stringify(redactSecrets(resolved, collectSecretValues(resolved)), { aliasDuplicateObjects: false, lineWidth: 0 }));
    return 0;
  },
};
