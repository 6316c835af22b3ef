export { Sandbox, removeStaleRoots, removeStaleContainers, type SandboxOptions, type SessionSpec } from './sandbox.js';
export { SandboxSession, type SessionReply, type SessionFailure } from './session.js';
export { SlotPool, type PoolStats } from './pool.js';
export { SandboxError, SandboxBusyError } from './errors.js';
export { sandboxEnv } from './env.js';
export { probePython, probeProvider, confineScriptPath, type PythonFacts } from './probe.js';
export { bwrapCommand, containerCommand, localCommand, type LaunchSpec, type ProviderSetup, type ContainerSettings } from './providers.js';
export { liveProcessGroups } from './launch.js';
export { DEFAULT_LIMITS, type Limits, type RunRequest, type RunResult, type ProviderInfo, type ProviderName, type Durations } from './types.js';
