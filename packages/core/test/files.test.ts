/**
 * core/files: atomic writes (temporary file beside the output, renamed into place; stale temporary
 * files of dead processes removed), the output lock (one writer; a dead holder's lock taken over
 * with a notice; another host's never), the input/output checks, and one-line file errors.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireOutputLock, AtomicFile, checkInputFile, checkOutputFile, fileErrorLine, isFsError, lockPathOf, tempPathOf, writeFileAtomic } from '@nemo-gym/core/files';
import { removeStaleTemps } from '../src/files/atomic.js';
import { sameFile } from '../src/files/paths.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'ng-files-'));

/** The pid of a process that has exited (a real one, so it is not reused within the test). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

describe('atomic writes', () => {
  it('the final path keeps its previous file until commit, then holds the new one; discard leaves it alone', () => {
    const dir = tmp();
    const out = join(dir, 'o.jsonl');
    writeFileSync(out, 'previous\n');
    const f = new AtomicFile(out);
    expect(f.tmpPath).toBe(tempPathOf(out));
    writeFileSync(f.tmpPath, 'new\n');
    expect(readFileSync(out, 'utf8')).toBe('previous\n');
    f.commit();
    expect(readFileSync(out, 'utf8')).toBe('new\n');
    expect(readdirSync(dir)).toEqual(['o.jsonl']);
    const g = new AtomicFile(out);
    writeFileSync(g.tmpPath, 'half');
    g.discard();
    expect(readFileSync(out, 'utf8')).toBe('new\n');
    expect(readdirSync(dir)).toEqual(['o.jsonl']);
  });

  it("removes a dead process's temporary files of the same output, and no one else's (nor another host's)", () => {
    const dir = tmp();
    const out = join(dir, 'o.jsonl');
    const dead = deadPid();
    const stale = [tempPathOf(out, '', dead), tempPathOf(out, 'unscored', dead)];
    const live = tempPathOf(out, '', process.ppid);
    const other = tempPathOf(join(dir, 'other.jsonl'), '', dead);
    // Another host's writer in a shared folder: its pid means nothing here.
    const elsewhere = join(dir, `o.jsonl.${dead}@node-17.tmp`);
    for (const p of [...stale, live, other, elsewhere]) writeFileSync(p, 'x');
    expect(removeStaleTemps(out).sort()).toEqual(stale.sort());
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
    writeFileAtomic(out, 'done\n');
    expect(readFileSync(out, 'utf8')).toBe('done\n');
  });

  it('a replaced file keeps its permissions, a read-only one included', () => {
    const out = join(tmp(), 'o.jsonl');
    writeFileSync(out, 'old\n', { mode: 0o440 });
    writeFileAtomic(out, 'new\n');
    expect(readFileSync(out, 'utf8')).toBe('new\n');
    expect(statSync(out).mode & 0o777).toBe(0o440);
  });

  it('writing through a symbolic link replaces the file it points to and keeps the link', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'o.jsonl'), 'old\n');
    symlinkSync(join(dir, 'real', 'o.jsonl'), join(dir, 'link.jsonl'));
    writeFileAtomic(join(dir, 'link.jsonl'), 'new\n');
    expect(readFileSync(join(dir, 'real', 'o.jsonl'), 'utf8')).toBe('new\n');
    expect(readFileSync(join(dir, 'link.jsonl'), 'utf8')).toBe('new\n');
  });
});

describe('the output lock', () => {
  it('one holder: a second is refused naming pid and host; after release it can be taken again', () => {
    const out = join(tmp(), 'o.jsonl');
    const lock = acquireOutputLock(out, 'ng-test-a');
    expect(JSON.parse(readFileSync(lockPathOf(out), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname(), command: 'ng-test-a' });
    // Another spelling of the same file shares the lock.
    const rel = join(out, '..', '.', 'o.jsonl');
    expect(() => acquireOutputLock(rel, 'ng-test-b')).toThrow(new RegExp(`being written by another process: ng-test-a \\(pid ${process.pid} on this host \\(${hostname()}\\)`));
    lock.release();
    expect(existsSync(lockPathOf(out))).toBe(false);
    acquireOutputLock(out, 'ng-test-b').release();
  });

  it('folders made for the lock go with it when nothing else was written there', () => {
    const dir = tmp();
    const lock = acquireOutputLock(join(dir, 'a', 'b', 'o.jsonl'), 'ng-test');
    expect(existsSync(join(dir, 'a', 'b'))).toBe(true);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
    const kept = acquireOutputLock(join(dir, 'c', 'o.jsonl'), 'ng-test');
    writeFileSync(join(dir, 'c', 'o.jsonl'), 'rows\n');
    kept.release();
    expect(readdirSync(join(dir, 'c'))).toEqual(['o.jsonl']);
  });

  it("takes over a dead process's lock with a one-line notice", () => {
    const out = join(tmp(), 'o.jsonl');
    const pid = deadPid();
    writeFileSync(lockPathOf(out), JSON.stringify({ pid, host: hostname(), started_at: '2026-01-01T00:00:00.000Z', command: 'ng-export', output: out, start_ticks: null, token: 'x' }));
    const notes: string[] = [];
    const lock = acquireOutputLock(out, 'ng-export', { log: (m) => notes.push(m) });
    expect(notes).toEqual([`Taking over the lock ${lockPathOf(out)}: the ng-export that held it (pid ${pid}, since 2026-01-01T00:00:00.000Z) is no longer running.`]);
    expect(JSON.parse(readFileSync(lockPathOf(out), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it("never takes over another host's lock (its process cannot be seen from here)", () => {
    const out = join(tmp(), 'o.jsonl');
    writeFileSync(lockPathOf(out), JSON.stringify({ pid: deadPid(), host: 'node-17', started_at: 'then', command: 'ng-collect-rollouts', output: out, start_ticks: null, token: 'y' }));
    expect(() => acquireOutputLock(out, 'ng-export')).toThrow(/ng-collect-rollouts \(pid \d+ on host node-17, since then\).*delete .*o\.jsonl\.lock/);
  });
});

describe('checks before anything is written', () => {
  it('an output that is the input is refused however it is spelt: ./name, a symbolic link, a hard link', () => {
    const dir = tmp();
    const input = join(dir, 'a.jsonl');
    writeFileSync(input, '{}\n');
    symlinkSync(input, join(dir, 'sym.jsonl'));
    linkSync(input, join(dir, 'hard.jsonl'));
    for (const p of [join(dir, '.', 'a.jsonl'), join(dir, 'sym.jsonl'), join(dir, 'hard.jsonl')]) {
      expect(sameFile(p, input)).toBe(true);
      expect(() => checkOutputFile({ path: p, flag: '+output' }, [{ path: input, flag: '+input' }])).toThrow(/is the input \+input=.*a\.jsonl \(the same file\)/);
    }
    expect(readFileSync(input, 'utf8')).toBe('{}\n');
  });

  it('refuses outputs that cannot be files: a folder, a device, /proc, a path through a regular file', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'file.txt'), '');
    const check = (p: string) => () => checkOutputFile({ path: p, flag: '+output' }, []);
    expect(check(dir)).toThrow(/is a folder/);
    expect(check('/dev/null')).toThrow(/not a regular file/);
    expect(check('/proc/self/out.jsonl')).toThrow(/is on \/proc, a virtual file system/);
    expect(check(join(dir, 'file.txt', 'o.jsonl'))).toThrow(/file\.txt is a regular file, not a folder/);
    expect(() => checkInputFile({ path: join(dir, 'typo.jsonl'), flag: '+input' })).toThrow(/Input file not found: \+input=.*typo\.jsonl/);
    expect(() => checkInputFile({ path: dir, flag: '+input' })).toThrow(/is a folder/);
  });

  it('a file-system error reads as one line naming the path, the cause and the fix', () => {
    let err: unknown;
    try {
      readFileSync('/nonexistent-ng/x.jsonl');
    } catch (e) {
      err = e;
    }
    expect(isFsError(err)).toBe(true);
    if (!isFsError(err)) return;
    expect(fileErrorLine(err)).toBe('cannot open /nonexistent-ng/x.jsonl: it does not exist (check the path) [ENOENT]');
    const nospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write', path: '/data/o.jsonl' });
    expect(fileErrorLine(nospc)).toBe('cannot write /data/o.jsonl: the disk is full (free some space, then run the same command again) [ENOSPC]');
  });
});
