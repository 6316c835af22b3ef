/** @nemo-gym/core/config: Config loading: YAML merge, overrides, interpolation, server instances, paths and ports. */
export { listLaunchable, ModelServerRefSchema, RESERVED_KEYS, ResourcesServerRefSchema } from './instances.js';
export { InterpolationError, resolveAll } from './interpolate.js';
export { isDict, type ConfigDict } from './merge.js';
export { parseOverride, type Override, type ParsedArgs } from './overrides.js';
export { closest, DEFAULT_HEAD_PORT, DEFAULT_HOST, findOpenPort, loadYamlFile, parseGlobalConfig, repoRoot, sharedPath, type ParseOptions } from './parse.js';
export { collectSecretValues, MASK, redactSecrets, redactUrlCredentials } from './redact.js';
export { instanceConfig, publicConfig } from './scoped.js';
export { GLOBAL_SETTING_NAMES, GLOBAL_SETTINGS, headServerOf, originOf, settingValue, type GlobalSetting } from './settings.js';
