/**
 * What each process may see of the merged config.
 *
 * - {@link publicConfig}: the config with interpolations resolved and every secret masked
 *   (secret-looking keys, credentials in URLs, and copies of those values anywhere else). This
 *   is what the head server serves and what a server sees of every instance but its own:
 *   host, port, entrypoint, refs and every other non-secret setting stay, so calls between
 *   servers keep working.
 * - {@link instanceConfig}: the public config with one instance's own block resolved and
 *   unmasked. ng-run hands each server exactly this, so a key interpolated into the model
 *   server's block (`openai_api_key: ${policy_api_key}`) reaches the model server only.
 */
import { resolveValue } from './interpolate.js';
import { isDict, type ConfigDict } from './merge.js';
import { collectSecretValues, redactSecrets } from './redact.js';

/** Resolves each top-level entry on its own; one that cannot be resolved is kept as written. */
function resolveEach(config: ConfigDict): ConfigDict {
  const out: ConfigDict = {};
  for (const [k, v] of Object.entries(config)) {
    try {
      out[k] = resolveValue(config, v, k);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

/** The merged config, resolved, with every secret masked as `****`. */
export function publicConfig(config: ConfigDict): ConfigDict {
  const resolved = resolveEach(config);
  return redactSecrets(resolved, collectSecretValues(resolved));
}

/**
 * The config one server instance's process receives: {@link publicConfig} (pass it in when
 * computing many) with the instance's own block resolved and complete.
 */
export function instanceConfig(config: ConfigDict, name: string, pub: ConfigDict = publicConfig(config)): ConfigDict {
  const own = config[name];
  if (!isDict(own)) return pub;
  let resolved: unknown;
  try {
    resolved = resolveValue(config, own, name);
  } catch {
    // The server reports the unresolvable reference itself when it starts.
    resolved = own;
  }
  return { ...pub, [name]: resolved };
}
