"""Confinement of one process that is about to run model-written code (Linux).

Used two ways:

* as a launcher: ``python3 confine.py '<json settings>' exec PROGRAM ARGS...`` applies every
  layer and then replaces itself with PROGRAM (``execve``; the layers stay in force), or
  ``python3 confine.py '<json settings>' python SCRIPT ARGS...`` applies every layer and runs SCRIPT
  in this same interpreter (no second interpreter start-up). With ``"defer": true`` the script
  runs first and applies the layers itself by calling ``ng_sandbox_confine.apply()`` (so it can
  import heavy modules before the filters are in place);
* as a library: a long-lived runner imports it (``sys.modules['ng_sandbox_confine']``) and calls
  ``install_seccomp(...)`` in each forked child that runs model code.

Layers, each reported as a short status string (a layer the OS does not offer is reported, not
fatal): resource limits (address space, CPU seconds, file size, open files, processes, no core
files), die-with-parent, dropped capabilities, Landlock (read-only system and interpreter folders,
read-write work folder, nothing else; TCP refused with ABI 4+), and a seccomp filter (no new
processes unless allowed, no sockets unless network is allowed, no io_uring, no ptrace or
cross-process memory access, signals only to this process or its own process group).
"""

import ctypes
import errno
import json
import os
import resource
import signal
import stat
import struct
import sys

# ---------------------------------------------------------------------------------------------
# Resource limits


def _set_limit(kind, value, hard_extra=0):
    if value is None:
        return
    try:
        resource.setrlimit(kind, (value, value + hard_extra))
    except (ValueError, OSError):
        # Above the current hard limit: keep that (lower) hard limit.
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY and hard < value:
            resource.setrlimit(kind, (hard, hard))


def apply_limits(s):
    if s.get("memory_bytes"):
        _set_limit(resource.RLIMIT_AS, int(s["memory_bytes"]))
    if s.get("cpu_s"):
        # SIGXCPU at the soft limit, SIGKILL one second later.
        _set_limit(resource.RLIMIT_CPU, int(s["cpu_s"]), 1)
    if s.get("file_bytes") is not None:
        _set_limit(resource.RLIMIT_FSIZE, int(s["file_bytes"]))
    _set_limit(resource.RLIMIT_CORE, 0)
    if s.get("open_files"):
        _set_limit(resource.RLIMIT_NOFILE, int(s["open_files"]))
    # No RLIMIT_NPROC: it counts every process of the user (and root is exempt), so it cannot
    # bound one sandbox. processes == 1 is enforced by seccomp; a count above 1 only by the
    # container provider's pids cgroup.
    return "applied"


# ---------------------------------------------------------------------------------------------
# Capabilities, parent death, seccomp

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000


def _ret_errno(code):
    return 0x00050000 | (code & 0xFFFF)


# Syscall numbers per architecture: (audit arch, numbers).
SYSCALLS = {
    "x86_64": (
        0xC000003E,
        dict(fork=57, vfork=58, clone=56, clone3=435, execve=59, execveat=322, socket=41,
             io_uring_setup=425, ptrace=101, process_vm_readv=310, process_vm_writev=311,
             kill=62, tkill=200, tgkill=234, rt_sigqueueinfo=129, rt_tgsigqueueinfo=297,
             pidfd_send_signal=424, pidfd_open=434, pidfd_getfd=438),
    ),
    "aarch64": (
        0xC00000B7,
        dict(clone=220, clone3=435, execve=221, execveat=281, socket=198, io_uring_setup=425,
             ptrace=117, process_vm_readv=270, process_vm_writev=271, kill=129, tkill=130,
             tgkill=131, rt_sigqueueinfo=138, rt_tgsigqueueinfo=240, pidfd_send_signal=424,
             pidfd_open=434, pidfd_getfd=438),
    ),
}

LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06
CLONE_THREAD = 0x00010000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def build_filter(arch_id, nr, own_pid, allow_processes, allow_exec, allow_network):
    """Classic-BPF program: a list of [code, jt, jf, k]."""
    prog = []
    rules = []
    eperm = _ret_errno(errno.EPERM)
    if not allow_processes:
        for name in ("fork", "vfork"):
            if name in nr:
                rules.append((nr[name], [("ret", eperm)]))
        rules.append((nr["clone3"], [("ret", _ret_errno(errno.ENOSYS))]))
        # clone: threads (CLONE_THREAD) are fine, new processes are not.
        rules.append((nr["clone"], [("ld_arg0",), ("jset", CLONE_THREAD, "allow", eperm)]))
    if not allow_exec:
        for name in ("execve", "execveat"):
            rules.append((nr[name], [("ret", eperm)]))
    if not allow_network:
        # No new sockets at all, UNIX ones included (a container runtime's socket file would
        # otherwise be reachable). Descriptors opened before the filter keep working.
        rules.append((nr["socket"], [("ret", _ret_errno(errno.ENETUNREACH))]))
    rules.append((nr["io_uring_setup"], [("ret", _ret_errno(errno.ENOSYS))]))
    for name in ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
                 "pidfd_send_signal", "tkill"):
        rules.append((nr[name], [("ret", eperm)]))
    pid_k = own_pid & 0xFFFFFFFF
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        body = [("ld_arg0",), ("jeq", pid_k, "allow", None)]
        if name == "kill":
            body.append(("jeq", 0, "allow", None))  # own process group
            body.append(("jeq", (-own_pid) & 0xFFFFFFFF, "allow", None))
        body.append(("ret", eperm))
        rules.append((nr[name], body))

    prog.append([LD_W_ABS, 0, 0, 4])  # seccomp_data.arch
    prog.append([JEQ_K, 1, 0, arch_id])
    prog.append([RET_K, 0, 0, eperm])  # another syscall ABI (e.g. i386 via int 0x80)
    prog.append([LD_W_ABS, 0, 0, 0])  # seccomp_data.nr
    if arch_id == 0xC000003E:
        prog.append([JGE_K, 0, 1, 0x40000000])  # x32 ABI numbers
        prog.append([RET_K, 0, 0, eperm])
    for number, body in rules:
        out = []
        for op in body:
            if op[0] == "ret":
                out.append([RET_K, 0, 0, op[1]])
            elif op[0] == "ld_arg0":
                out.append([LD_W_ABS, 0, 0, 16])  # low 32 bits of args[0]
            else:
                out.append([JEQ_K if op[0] == "jeq" else JSET_K, "allow", 0, op[1]])
                if op[3] is not None:
                    out.append([RET_K, 0, 0, op[3]])
        out.append([RET_K, 0, 0, RET_ALLOW])  # target of the "allow" jumps
        allow_index = len(out) - 1
        for i, ins in enumerate(out):
            if ins[1] == "allow":
                ins[1] = allow_index - i - 1
        # Every body ends in RET, so the next rule is only reached by the skip jump, with A = nr.
        prog.append([JEQ_K, 0, len(out), number])
        prog.extend(out)
    prog.append([RET_K, 0, 0, RET_ALLOW])
    return prog


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def install_seccomp(allow_processes=False, allow_exec=False, allow_network=False):
    machine = os.uname().machine
    if machine not in SYSCALLS:
        return "unavailable on " + machine
    arch_id, nr = SYSCALLS[machine]
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return "no_new_privs failed: " + os.strerror(ctypes.get_errno())
    prog = build_filter(arch_id, nr, os.getpid(), allow_processes, allow_exec, allow_network)
    arr = (_SockFilter * len(prog))(*[_SockFilter(c, jt, jf, k) for c, jt, jf, k in prog])
    fprog = _SockFprog(len(prog), arr)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return "seccomp failed: " + os.strerror(ctypes.get_errno())
    return "active"


def drop_capabilities():
    libc = _libc()
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly for unknown caps

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        return "capset failed: " + os.strerror(ctypes.get_errno())
    return "dropped"


def die_with_parent(parent_pid):
    """SIGKILL this process when the process that started it goes away."""
    _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent_pid and os.getppid() != parent_pid:  # the parent died before the call above
        os._exit(0)
    return "set"


# ---------------------------------------------------------------------------------------------
# Landlock (Linux 5.13+)

LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
READ_ONLY_PATHS = [
    "/usr", "/lib", "/lib64", "/lib32", "/bin", "/opt",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
    "/etc/group", "/etc/nsswitch.conf", "/etc/mime.types",
    "/sys/devices/system/cpu", "/proc/self", "/proc/cpuinfo", "/proc/meminfo",
    "/dev/urandom", "/dev/random", "/dev/zero",
]
READ_WRITE_FILES = ["/dev/null"]


def _landlock_paths(extra):
    paths = list(READ_ONLY_PATHS)
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]:
        paths.append(p)
    for p in sys.path:
        if p and os.path.isabs(p):
            paths.append(p)
    paths.extend(extra or [])
    return paths


def install_landlock(workdir, readable_paths=(), allow_network=False):
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 0:
        return "unavailable: " + os.strerror(ctypes.get_errno())
    handled_fs = (1 << 13) - 1
    if abi >= 2:
        handled_fs |= 1 << 13  # REFER
    if abi >= 3:
        handled_fs |= FS_TRUNCATE
    if abi >= 5:
        handled_fs |= FS_IOCTL_DEV
    handled_net = 0 if (abi < 4 or allow_network) else 3  # TCP bind + connect
    scoped = 3 if abi >= 6 else 0  # abstract UNIX sockets + signals outside this domain
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    attr = ctypes.create_string_buffer(struct.pack("<QQQ", handled_fs, handled_net, scoped)[:size], size)
    ruleset = libc.syscall(LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return "ruleset failed: " + os.strerror(ctypes.get_errno())
    file_rights = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (handled_fs & (FS_TRUNCATE | FS_IOCTL_DEV))
    failed = []

    def allow(path, rights):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= file_rights
            rule = ctypes.create_string_buffer(struct.pack("<Qi", rights & handled_fs, fd), 12)
            if libc.syscall(LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0)) != 0:
                failed.append("%s (%s)" % (path, os.strerror(ctypes.get_errno())))
        finally:
            os.close(fd)

    try:
        for path in _landlock_paths(readable_paths):
            allow(path, FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
        for path in READ_WRITE_FILES:
            allow(path, FS_READ_FILE | FS_WRITE_FILE)
        if workdir:
            allow(workdir, handled_fs)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return "no_new_privs failed: " + os.strerror(ctypes.get_errno())
        if libc.syscall(LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return "restrict_self failed: " + os.strerror(ctypes.get_errno())
    finally:
        os.close(ruleset)
    return "active (ABI %d)" % abi + ("; rules not added: " + ", ".join(failed) if failed else "")


# ---------------------------------------------------------------------------------------------
# All layers


def _guarded(step, *args, **kwargs):
    try:
        return step(*args, **kwargs)
    except Exception as exc:  # e.g. no prctl/capset in this libc
        return "unavailable: %s" % exc


SETTINGS = {}
REPORT = {}


def apply(settings=None, seccomp=None):
    """Applies every layer the settings ask for; returns {layer: status}. ``seccomp=False``
    leaves the seccomp filter out (a runner that forks installs it in each child instead)."""
    s = SETTINGS if settings is None else settings
    report = {}
    if s.get("parent_pid"):
        report["die_with_parent"] = _guarded(die_with_parent, int(s["parent_pid"]))
    report["limits"] = _guarded(apply_limits, s)
    report["capabilities"] = _guarded(drop_capabilities) if s.get("drop_capabilities", True) else "kept"
    if s.get("landlock", True):
        report["landlock"] = _guarded(install_landlock, s.get("workdir"), s.get("readable_paths") or [],
                                      bool(s.get("network")))
    else:
        report["landlock"] = "disabled"
    want_seccomp = s.get("seccomp", True) if seccomp is None else seccomp
    if want_seccomp:
        report["seccomp"] = _guarded(
            install_seccomp,
            allow_processes=int(s.get("processes") or 1) > 1,
            # A process allowed to start processes may also run programs in them.
            allow_exec=bool(s.get("allow_exec")) or int(s.get("processes") or 1) > 1,
            allow_network=bool(s.get("network")),
        )
    else:
        report["seccomp"] = "deferred" if s.get("seccomp", True) else "disabled"
    REPORT.clear()
    REPORT.update(report)
    return report


def child_seccomp():
    """The filter for a process forked by a runner to run model code (see module docstring)."""
    if not SETTINGS.get("seccomp", True):
        return "disabled"
    return _guarded(install_seccomp, allow_processes=False, allow_exec=False,
                    allow_network=bool(SETTINGS.get("network")))


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ("exec", "python", "check"):
        sys.stderr.write("usage: confine.py SETTINGS_JSON (exec PROGRAM | python SCRIPT | check -) [ARGS...]\n")
        os._exit(2)
    SETTINGS.update(json.loads(sys.argv[1]))
    mode, target, args = sys.argv[2], sys.argv[3], sys.argv[4:]
    if SETTINGS.get("workdir"):
        os.chdir(SETTINGS["workdir"])
    sys.modules["ng_sandbox_confine"] = sys.modules[__name__]
    if mode == "check":
        # Applies every layer and prints what is in force (used when probing a provider).
        sys.stdout.write(json.dumps(apply()) + "\n")
        return
    if mode == "exec":
        SETTINGS["allow_exec"] = True
        apply()
        try:
            os.execv(target, [target] + args)
        except OSError as exc:
            sys.stderr.write("sandbox: cannot run %s: %s\n" % (target, exc))
            os._exit(127)
    if not SETTINGS.get("defer"):
        apply()
    import runpy

    sys.argv = [target] + args
    sys.path[0] = os.path.dirname(os.path.abspath(target))
    runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    main()
