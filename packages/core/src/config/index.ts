/** @nemo-gym/core/config: Config loading: YAML merge, overrides, interpolation, server instances, paths and ports. */
export { AgentServerRefSchema, DatasetConfigSchema, DOMAINS, DomainSchema, getFirstServerConfigDict, listLaunchable, listServerInstances, ModelServerRefSchema, RESERVED_KEYS, ResourcesServerRefSchema, SERVER_TYPES, ServerRefSchema, type DatasetConfig, type ServerInstance, type ServerRef, type ServerType } from './instances.js';
export { InterpolationError, resolveAll } from './interpolate.js';
export { isDict, type ConfigDict } from './merge.js';
export { parseOverride, type Override, type ParsedArgs } from './overrides.js';
export { closest, DEFAULT_HEAD_PORT, DEFAULT_HOST, findOpenPort, getGlobalConfig, loadYamlFile, parseGlobalConfig, repoRoot, sharedPath, type ParsedConfig, type ParseOptions } from './parse.js';
export { collectSecretValues, isSecretKey, MASK, redactSecrets, redactUrlCredentials } from './redact.js';
export { instanceConfig, publicConfig } from './scoped.js';
export { GLOBAL_SETTING_NAMES, GLOBAL_SETTINGS, headServerOf, numberSetting, originOf, settingValue, type GlobalSetting, type GlobalSettingName, type HeadAddress } from './settings.js';
