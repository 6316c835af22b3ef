// coding_repo: a small repository with failing tests per row. `/verify` takes the agent's diff of
// the repository (`harness.patch`, as harness_agent sends it), applies it to the row's files in a
// fresh @nemo-gym/sandbox work folder, puts the row's test files back as they were (a change to a
// test does not count), and runs the row's test command there: reward 1.0 when it exits 0.
import { z } from 'zod';
import { BaseVerifyRequestSchema, ResourcesServerConfigSchema, defineResourcesServer, startIfMain } from '@nemo-gym/core/server';
import { HttpError } from '@nemo-gym/core/errors';
import { Sandbox, sandboxConfigShape, sandboxOptionsFromConfig } from '@nemo-gym/sandbox';

export const CodingRepoConfigSchema = ResourcesServerConfigSchema.extend({
  /** Test runs at once (the sandbox pool size). */
  num_processes: z.coerce.number().int().min(1).default(4),
  /** Wall-clock limit of one test run, seconds. */
  test_timeout_s: z.coerce.number().positive().default(60),
  /** Address-space limit of the test processes, MiB (0 = none; Node's test runner needs none). */
  memory_limit_mb: z.coerce.number().int().min(0).default(0),
  ...sandboxConfigShape('auto'),
});
export type CodingRepoConfig = z.output<typeof CodingRepoConfigSchema>;

const RepoPath = z.string().refine((p) => p.length > 0 && !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '.git'), 'a relative path inside the repository (no `..`, not under .git)');

export const CodingRepoVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  workspace: z.object({ files: z.record(RepoPath, z.string()) }).loose(),
  verifier_metadata: z.object({
    /** The test command (argv; the first word is looked up on the sandbox's PATH). */
    test_command: z.array(z.string()).min(1),
    /** Files restored to the row's version before the tests run. */
    test_files: z.array(RepoPath).default([]),
  }),
  /** What harness_agent sends: the repository's diff against the row's files. */
  harness: z.object({ patch: z.string().default('') }).loose().nullable().default(null),
}).loose();

const SCRIPT = [
  'cd repo',
  'if [ -s ../ng.patch ]; then git apply --whitespace=nowarn ../ng.patch || { echo "NG_PATCH_FAILED" >&2; exit 97; }; fi',
  'if [ -d ../protected ]; then cp -a ../protected/. .; fi',
  'exec "$@"',
].join('\n');

export const server = defineResourcesServer({
  className: 'CodingRepoResourcesServer',
  configSchema: CodingRepoConfigSchema,
  setup: async ({ config, log }) => ({ sandbox: await Sandbox.create({ ...sandboxOptionsFromConfig(config, log), poolSize: config.num_processes, name: 'ng-coding-repo' }) }),
  close: async ({ state }) => {
    await state.sandbox.close();
  },
  verify: {
    body: CodingRepoVerifyRequestSchema,
    handler: async (body, ctx) => {
      const files: Record<string, string> = body.workspace.files;
      const meta = body.verifier_metadata;
      const patch = body.harness?.patch ?? '';
      const runFiles: Record<string, string> = { 'ng.patch': patch };
      for (const [path, text] of Object.entries(files)) runFiles[`repo/${path}`] = text;
      for (const path of meta.test_files) {
        const text = files[path];
        if (text === undefined) throw new HttpError(422, `verifier_metadata.test_files names '${path}', which is not in workspace.files`);
        runFiles[`protected/${path}`] = text;
      }
      const r = await ctx.state.sandbox.run({
        argv: ['/bin/bash', '-c', SCRIPT, 'verify', ...meta.test_command],
        files: runFiles,
        env: { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', PYTHONDONTWRITEBYTECODE: '1' },
        limits: { wallMs: ctx.config.test_timeout_s * 1000, processes: 64, memoryBytes: ctx.config.memory_limit_mb * 1024 * 1024, outputBytes: 256 * 1024, network: false },
      });
      const patchApplied = !(r.exitCode === 97 && r.stderr.includes('NG_PATCH_FAILED'));
      const passed = r.exitCode === 0 && !r.timedOut;
      const output = `${r.stdout}${r.stderr}`;
      return {
        ...body,
        reward: passed ? 1.0 : 0.0,
        tests_passed: passed,
        patch_applied: patchApplied,
        changed_files: [...new Set([...patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]!))],
        test_exit_code: r.exitCode,
        test_timed_out: r.timedOut,
        test_output: output.length > 4000 ? `…${output.slice(-4000)}` : output,
      };
    },
  },
});

startIfMain(import.meta.url, server);
