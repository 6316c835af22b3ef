// Command lines each provider builds (no process is started here).
import { describe, expect, it } from 'vitest';
import { bwrapCommand, containerCommand, localCommand, type LaunchSpec, type ProviderSetup } from '../src/providers.js';
import { DEFAULT_LIMITS } from '../src/types.js';

const setup: ProviderSetup = {
  name: 'local',
  python: '/opt/py/bin/python3.11',
  confineScript: '/repo/packages/sandbox/python/confine.py',
  netWrapper: ['unshare', '-n'],
  pythonPaths: ['/opt/py', '/opt/py/lib/python3.11', '/usr/lib/python3.11'],
};
const spec: LaunchSpec = {
  mode: 'python',
  target: '/srv/runner/run.py',
  args: ['--x'],
  workdir: '/tmp/ng-sandbox-1-a/run1',
  cwd: '/tmp/ng-sandbox-1-a/run1',
  limits: { ...DEFAULT_LIMITS, memoryBytes: 1024, processes: 1, cpuMs: 1500 },
  env: { PATH: '/usr/bin', HOME: '/tmp/ng-sandbox-1-a/run1' },
  readablePaths: ['/data/ro'],
  extraFds: true,
  name: 'ng-sbx-1-session1',
};
const settingsOf = (argv: string[]) => JSON.parse(argv[argv.indexOf(setup.confineScript) + 1]!) as Record<string, unknown>;

describe('local provider', () => {
  it('wraps the launcher in a network namespace and passes the limits to it', () => {
    const cmd = localCommand(setup, spec, 4242);
    expect(cmd.argv.slice(0, 5)).toEqual(['unshare', '-n', '/opt/py/bin/python3.11', '-B', setup.confineScript]);
    expect(cmd.argv.slice(6)).toEqual(['python', '/srv/runner/run.py', '--x']);
    expect(settingsOf(cmd.argv)).toMatchObject({ memory_bytes: 1024, cpu_s: 2, processes: 1, network: false, parent_pid: 4242, workdir: spec.cwd });
    expect(cmd.env).toBe(spec.env);
  });
  it('leaves the namespace out when network is allowed', () => {
    const cmd = localCommand(setup, { ...spec, limits: { ...spec.limits, network: true } }, 1);
    expect(cmd.argv[0]).toBe('/opt/py/bin/python3.11');
  });
});

describe('bwrap provider', () => {
  const fs = { exists: (p: string) => !p.startsWith('/lib32'), symlinkTarget: (p: string) => (['/bin', '/lib', '/lib64', '/sbin'].includes(p) ? `usr${p}` : null) };
  it('read-only system, no network, private /tmp, work folder writable, dies with the server', () => {
    const a = bwrapCommand({ ...setup, name: 'bwrap' }, spec, fs).argv;
    expect(a[0]).toBe('bwrap');
    for (const f of ['--die-with-parent', '--unshare-net', '--unshare-pid', '--new-session']) expect(a).toContain(f);
    const pairs = (flag: string) => a.flatMap((x, i) => (x === flag ? [`${a[i + 1]} ${a[i + 2]}`] : []));
    expect(pairs('--ro-bind')).toEqual(expect.arrayContaining(['/usr /usr', '/opt/py /opt/py', '/data/ro /data/ro', '/srv/runner /srv/runner']));
    expect(pairs('--ro-bind')).not.toContain('/usr/lib/python3.11 /usr/lib/python3.11'); // inside /usr already
    expect(pairs('--symlink')).toContain('usr/lib /lib');
    expect(pairs('--bind')).toEqual([`${spec.workdir} ${spec.workdir}`]);
    expect(a[a.indexOf('--tmpfs') + 1]).toBe('/tmp');
    expect(a.indexOf('--bind')).toBeGreaterThan(a.lastIndexOf('--ro-bind'));
    expect(settingsOf(a).parent_pid).toBeNull();
  });
});

describe('container provider', () => {
  it('no network, read-only root, memory and pids limits, named, image and interpreter from config', () => {
    const c = containerCommand(
      { ...setup, name: 'container', container: { engine: 'podman', image: 'localhost/py:1', python: '/usr/bin/python3', runtime: 'runc', extraArgs: ['--ulimit', 'nofile=1024:1024'] } },
      spec,
      77,
    );
    const a = c.argv;
    expect(a.slice(0, 4)).toEqual(['podman', '--runtime', 'runc', 'run']);
    const val = (f: string) => a[a.indexOf(f) + 1];
    expect(val('--network')).toBe('none');
    expect(val('--memory')).toBe('1024b');
    expect(val('--memory-swap')).toBe('1024b');
    expect(val('--pids-limit')).toBe('9');
    expect(val('--name')).toBe('ng-sbx-1-session1');
    expect(val('--label')).toBe('ng-sandbox-owner=77');
    expect(val('--preserve-fds')).toBe('2');
    for (const f of ['--rm', '--read-only', '-i']) expect(a).toContain(f);
    expect(a).toContain(`${spec.workdir}:${spec.workdir}:rw`);
    expect(a).toContain('/data/ro:/data/ro:ro');
    const img = a.indexOf('localhost/py:1');
    expect(a[img - 2]).toBe('--ulimit');
    expect(a.slice(img + 1, img + 4)).toEqual(['/usr/bin/python3', '-B', setup.confineScript]);
    // Variables reach the container only through --env, never the engine's own environment.
    expect(a).toContain('--env');
    expect(Object.keys(c.env).every((k) => ['PATH', 'HOME', 'XDG_RUNTIME_DIR', 'CONTAINER_HOST', 'DOCKER_HOST'].includes(k))).toBe(true);
  });
});
