import { commandRuns as runs, processAlive } from '../src/host.js';

export const hasPython = runs('python3', ['-c', 'pass']);
export const hasBwrap = hasPython && runs('bwrap', ['--ro-bind', '/', '/', '--unshare-net', '--die-with-parent', '/bin/true']);
/** Image built by scripts/build-python-image.sh (podman, runc). */
export const CONTAINER_IMAGE = process.env.NG_SANDBOX_TEST_IMAGE ?? 'localhost/ng-sandbox-python:latest';
export const hasContainer = hasPython && runs('podman', ['image', 'exists', CONTAINER_IMAGE]);
export const CONTAINER = {
  engine: 'podman',
  image: CONTAINER_IMAGE,
  python: '/usr/bin/python3',
  runtime: process.env.NG_SANDBOX_TEST_RUNTIME ?? 'runc',
  extraArgs: ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=4096:4096'],
};
export const providersHere = [
  'local' as const,
  ...(hasBwrap ? (['bwrap'] as const) : []),
  ...(hasContainer ? (['container'] as const) : []),
];
for (const [name, ok, why] of [
  ['bwrap', hasBwrap, 'bubblewrap is not installed or cannot create namespaces (apt-get install bubblewrap)'],
  ['container', hasContainer, `podman or the image ${CONTAINER_IMAGE} is missing (packages/sandbox/scripts/build-python-image.sh builds it)`],
] as const) {
  if (!ok) console.log(`sandbox tests: provider ${name} skipped: ${why}`);
}

export const alive = processAlive;
