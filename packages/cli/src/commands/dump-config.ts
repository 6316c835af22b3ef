/** ng-dump-config: the merged config, interpolations resolved, secrets redacted. */
import { stringify } from 'yaml';
import { collectSecretValues, redactSecrets, resolveAll, InterpolationError } from '@nemo-gym/core/config';
import { ConfigError } from '@nemo-gym/core/errors';
import type { CommandSpec } from '../runtime.js';

export const dumpConfigCommand: CommandSpec = {
  name: 'dump-config',
  summary: 'Print the merged config (interpolations resolved, secrets shown as ****)',
  main: async (config) => {
    let resolved;
    try {
      resolved = resolveAll(config);
    } catch (err) {
      if (err instanceof InterpolationError) throw new ConfigError(err.message);
      throw err;
    }
    process.stdout.write(stringify(redactSecrets(resolved, collectSecretValues(resolved)), { aliasDuplicateObjects: false, lineWidth: 0 }));
    return 0;
  },
};
