// The config keys a server uses to choose where model-written code runs, and the Sandbox
// options they stand for. Servers spread `sandboxConfigShape(...)` into their config schema and
// pass `sandboxOptionsFromConfig(config, log)` to Sandbox.create.
import { z } from 'zod';
import type { SandboxOptions } from './sandbox.js';

/** Config keys: `sandbox_provider`, `sandbox_container` and `python_executable`. */
export function sandboxConfigShape(defaultProvider: 'auto' | 'local' | 'bwrap' | 'container') {
  return {
    /** Where programs run: `auto` (the strongest provider that runs here), `local`, `bwrap`, `container`. */
    sandbox_provider: z.enum(['auto', 'local', 'bwrap', 'container']).default(defaultProvider),
    /** Container provider settings: engine (podman or docker), image, python inside the image. */
    sandbox_container: z
      .object({
        engine: z.string().optional(),
        image: z.string().optional(),
        python: z.string().optional(),
        runtime: z.string().optional(),
        extra_args: z.array(z.string()).optional(),
      })
      .default({}),
    python_executable: z.string().min(1).default('python3'),
  };
}

const SandboxConfigSchema = z.object(sandboxConfigShape('auto'));
export type SandboxConfig = z.output<typeof SandboxConfigSchema>;

/** The Sandbox options set by the config keys above; `log` is the server's logger. */
export function sandboxOptionsFromConfig(
  config: SandboxConfig,
  log?: { info(message: string): void; warn(message: string): void },
): Pick<SandboxOptions, 'provider' | 'python' | 'pythonConfigKey' | 'container' | 'log'> {
  return {
    provider: config.sandbox_provider,
    python: config.python_executable,
    pythonConfigKey: 'python_executable',
    container: { ...config.sandbox_container, extraArgs: config.sandbox_container.extra_args },
    ...(log ? { log: (level: 'info' | 'warn', message: string) => (level === 'warn' ? log.warn(message) : log.info(message)) } : {}),
  };
}
