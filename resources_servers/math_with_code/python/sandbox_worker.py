"""Long-lived Python interpreter for one math_with_code session.

Started by the Node server (src/sandbox.ts) as `python3 -u sandbox_worker.py '<json settings>'`,
possibly behind `unshare -n`. It applies resource limits and a seccomp filter to itself, then
serves `exec` requests read as JSON lines from fd 3 and answers as JSON lines on fd 4.
fd 0 and fd 1 point at /dev/null; fd 2 is read (and capped) by the server for diagnostics.

Semantics of one `exec` request match the upstream tool: the code runs with `exec(code, globals,
locals)` where both dicts live as long as the session, builtins are restricted to a short list,
Python-level stdout/stderr are captured, a SIGALRM raises TimeoutError("code timed-out"), and
the last line of the code is evaluated again to produce `result`.
"""

import ctypes
import errno
import io
import json
import os
import resource
import signal
import stat
import struct
import sys

SETTINGS = json.loads(sys.argv[1])
CMD_FD = 3
REPLY_FD = 4

# ---------------------------------------------------------------------------------------------
# Resource limits


def _set_limit(kind, value, hard_extra=0):
    if value is None:
        return
    try:
        resource.setrlimit(kind, (value, value + hard_extra))
    except (ValueError, OSError):
        # Lowering never fails unless the value is above the current hard limit; keep the
        # current (lower) hard limit in that case.
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY and hard < value:
            resource.setrlimit(kind, (hard, hard))


def apply_limits():
    mib = 1024 * 1024
    if SETTINGS.get("memory_limit_mb"):
        _set_limit(resource.RLIMIT_AS, int(SETTINGS["memory_limit_mb"]) * mib)
    if SETTINGS.get("cpu_limit_s"):
        # SIGXCPU at the soft limit (reported as such), SIGKILL one second later.
        _set_limit(resource.RLIMIT_CPU, int(SETTINGS["cpu_limit_s"]), 1)
    if SETTINGS.get("file_size_limit_mb") is not None:
        _set_limit(resource.RLIMIT_FSIZE, int(SETTINGS["file_size_limit_mb"]) * mib)
    _set_limit(resource.RLIMIT_CORE, 0)
    if SETTINGS.get("open_files_limit"):
        _set_limit(resource.RLIMIT_NOFILE, int(SETTINGS["open_files_limit"]))


# ---------------------------------------------------------------------------------------------
# Capabilities and seccomp (Linux only; each step reports what it could do)

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


def _build_filter(arch_id, nr, own_pid, allow_processes, allow_network):
    """A classic-BPF seccomp program. Blocks: creating processes and running other programs
    (unless allowed), creating sockets (unless allowed), io_uring (it can open sockets without
    the socket syscall), ptrace and cross-process memory access, and signals to any process
    but this one."""
    prog = []

    def stmt(code, k):
        prog.append([code, 0, 0, k])

    # Rules are (syscall name, list of instructions evaluated with A = syscall number matched).
    # Each rule is emitted as: if nr != N skip over the rule body; body ends in RET.
    rules = []
    eperm = _ret_errno(errno.EPERM)
    if not allow_processes:
        for name in ("fork", "vfork", "execve", "execveat"):
            if name in nr:
                rules.append((nr[name], [("ret", eperm)]))
        rules.append((nr["clone3"], [("ret", _ret_errno(errno.ENOSYS))]))
        # clone: threads (CLONE_THREAD) are fine, new processes are not.
        rules.append((nr["clone"], [("ld_arg0",), ("jset", CLONE_THREAD, "allow", eperm)]))
    if not allow_network:
        # No new sockets at all: UNIX sockets too, since a socket file such as a container
        # runtime's would otherwise be reachable. (Already-open descriptors keep working.)
        rules.append((nr["socket"], [("ret", _ret_errno(errno.ENETUNREACH))]))
    rules.append((nr["io_uring_setup"], [("ret", _ret_errno(errno.ENOSYS))]))
    for name in ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
                 "pidfd_send_signal", "tkill"):
        rules.append((nr[name], [("ret", eperm)]))
    pid_k = own_pid & 0xFFFFFFFF
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        body = [("ld_arg0",), ("jeq", pid_k, "allow", None)]
        if name == "kill":
            body.append(("jeq", 0, "allow", None))  # own process group (this process leads it)
            body.append(("jeq", (-own_pid) & 0xFFFFFFFF, "allow", None))
        body.append(("ret", eperm))
        rules.append((nr[name], body))

    stmt(LD_W_ABS, 4)  # seccomp_data.arch
    prog.append([JEQ_K, 1, 0, arch_id])
    stmt(RET_K, eperm)  # any other syscall ABI (e.g. i386 via int 0x80) is refused
    stmt(LD_W_ABS, 0)  # seccomp_data.nr
    if arch_id == 0xC000003E:
        prog.append([JGE_K, 0, 1, 0x40000000])  # x32 ABI numbers
        stmt(RET_K, eperm)
    for number, body in rules:
        # Expand the body first to know its length.
        out = []
        for op in body:
            if op[0] == "ret":
                out.append([RET_K, 0, 0, op[1]])
            elif op[0] == "ld_arg0":
                out.append([LD_W_ABS, 0, 0, 16])  # low 32 bits of args[0] (little endian)
            elif op[0] in ("jeq", "jset"):
                # if condition -> allow (next instruction is RET ALLOW after a fallthrough chain)
                out.append([JEQ_K if op[0] == "jeq" else JSET_K, "allow", 0, op[1]])
                if op[3] is not None:
                    out.append([RET_K, 0, 0, op[3]])
        out.append([RET_K, 0, 0, RET_ALLOW])  # target of the "allow" jumps
        allow_index = len(out) - 1
        for i, ins in enumerate(out):
            if ins[1] == "allow":
                ins[1] = allow_index - i - 1
        # After a "ld_arg0" the accumulator no longer holds the syscall number, but every body
        # ends in RET, so the next rule is only reached through the skip jump below.
        prog.append([JEQ_K, 0, len(out), number])
        prog.extend(out)
        # Subsequent rule checks need A = nr again; the skip jump lands here with A intact.
    stmt(RET_K, RET_ALLOW)
    return prog


def drop_capabilities():
    libc = ctypes.CDLL(None, use_errno=True)
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


def _guarded(step):
    try:
        return step()
    except Exception as exc:  # e.g. no prctl/capset in this libc (not Linux)
        return "unavailable: %s" % exc


def die_with_parent():
    """SIGKILL this interpreter if the server process goes away without closing it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        parent = SETTINGS.get("parent_pid")
        if parent and os.getppid() != parent:  # the server died before the call above
            os._exit(0)
    except Exception:
        pass


# Landlock (Linux 5.13+): the filesystem view of the interpreter. Read-only: the system library
# folders and the interpreter's own folders; read-write: the session's scratch folder; nothing
# else (so no repository files, no other processes' /proc entries, no sockets files).
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


def _landlock_paths():
    paths = list(READ_ONLY_PATHS)
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]:
        paths.append(p)
    for p in sys.path:
        if p and os.path.isabs(p):
            paths.append(p)
    for extra in SETTINGS.get("readable_paths") or []:
        paths.append(extra)
    return paths


def install_landlock():
    libc = ctypes.CDLL(None, use_errno=True)
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
    handled_net = 0 if (abi < 4 or SETTINGS.get("allow_network")) else 3  # bind + connect TCP
    scoped = 3 if abi >= 6 else 0  # abstract UNIX sockets + signals outside this sandbox
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
        for path in _landlock_paths():
            allow(path, FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
        for path in READ_WRITE_FILES:
            allow(path, FS_READ_FILE | FS_WRITE_FILE)
        if SETTINGS.get("workdir"):
            allow(SETTINGS["workdir"], handled_fs)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return "no_new_privs failed: " + os.strerror(ctypes.get_errno())
        if libc.syscall(LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return "restrict_self failed: " + os.strerror(ctypes.get_errno())
    finally:
        os.close(ruleset)
    return "active (ABI %d)" % abi + ("; rules not added: " + ", ".join(failed) if failed else "")


def install_seccomp():
    machine = os.uname().machine
    if machine not in SYSCALLS:
        return "unavailable on " + machine
    arch_id, nr = SYSCALLS[machine]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return "no_new_privs failed: " + os.strerror(ctypes.get_errno())
    prog = _build_filter(
        arch_id,
        nr,
        os.getpid(),
        bool(SETTINGS.get("allow_subprocesses")),
        bool(SETTINGS.get("allow_network")),
    )
    arr = (_SockFilter * len(prog))(*[_SockFilter(c, jt, jf, k) for c, jt, jf, k in prog])
    fprog = _SockFprog(len(prog), arr)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return "seccomp failed: " + os.strerror(ctypes.get_errno())
    return "active"


# ---------------------------------------------------------------------------------------------
# Execution


class CappedStringIO(io.StringIO):
    """StringIO that keeps the first `limit` characters and counts the rest."""

    def __init__(self, limit):
        super().__init__()
        self._limit = limit
        self._kept = 0
        self.dropped = 0

    def write(self, s):
        if not isinstance(s, str):
            return super().write(s)  # raises the usual TypeError
        room = self._limit - self._kept
        if room >= len(s):
            self._kept += len(s)
            super().write(s)
        else:
            if room > 0:
                super().write(s[:room])
                self._kept += room
            self.dropped += len(s) - max(room, 0)
        return len(s)


def _truncate(text, limit):
    if text is None or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


ALLOWED_BUILTINS = [
    "print", "len", "str", "int", "float", "list", "dict", "tuple", "set", "min", "max", "sum",
    "abs", "range", "enumerate", "zip", "__import__",
]
NOT_EXPRESSION_PREFIXES = ("print", "import", "from", "def", "class", "if", "for", "while", "try", "with")


def make_globals(modules):
    import builtins

    env = {"__builtins__": {name: getattr(builtins, name) for name in ALLOWED_BUILTINS}}
    env.update(modules)
    return env


def last_expression_value(code, globals_d, locals_d):
    lines = code.strip().split("\n")
    last_line = lines[-1].strip()
    if last_line.startswith(NOT_EXPRESSION_PREFIXES):
        return None
    try:
        return str(eval(last_line, globals_d, locals_d))
    except Exception:
        return None


def _on_alarm(signum, frame):
    raise TimeoutError("code timed-out")


def describe_error(exc):
    if isinstance(exc, MemoryError):
        limit = SETTINGS.get("memory_limit_mb")
        return "MemoryError: the code used more memory than allowed" + (
            " (%s MiB per interpreter)" % limit if limit else ""
        )
    if isinstance(exc, RecursionError):
        return str(exc)
    message = str(exc)
    if not message:
        message = type(exc).__name__
    if isinstance(exc, OSError) and exc.errno == errno.EPERM and not SETTINGS.get("allow_subprocesses"):
        message += " (this sandbox does not allow starting processes or signalling other processes)"
    return message


def run(code, globals_d, locals_d, timeout_s, output_limit):
    out = CappedStringIO(output_limit)
    err = CappedStringIO(output_limit)
    saved = sys.stdout, sys.stderr
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(timeout_s)
    try:
        sys.stdout, sys.stderr = out, err
        try:
            exec(code, globals_d, locals_d)
            result = last_expression_value(code, globals_d, locals_d)
        finally:
            signal.alarm(0)
            sys.stdout, sys.stderr = saved
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a tool error
        signal.alarm(0)
        return {"ok": False, "error": describe_error(exc)}
    result, result_dropped = _truncate(result, output_limit)
    return {
        "ok": True,
        "out": out.getvalue(),
        "err": err.getvalue(),
        "res": result,
        "out_dropped": out.dropped,
        "err_dropped": err.dropped,
        "res_dropped": result_dropped,
    }


def main():
    preload = {}
    missing = []
    for alias, name in (("np", "numpy"), ("numpy", "numpy"), ("scipy", "scipy"), ("pd", "pandas"), ("pandas", "pandas")):
        if name not in SETTINGS.get("preload", ["numpy", "scipy", "pandas"]):
            continue
        try:
            preload[alias] = __import__(name)
        except Exception:
            if name not in missing:
                missing.append(name)

    os.chdir(SETTINGS.get("workdir") or "/")
    die_with_parent()
    apply_limits()
    caps = _guarded(drop_capabilities) if SETTINGS.get("drop_capabilities", True) else "kept"
    landlock = _guarded(install_landlock) if SETTINGS.get("landlock", True) else "disabled"
    seccomp = _guarded(install_seccomp) if SETTINGS.get("seccomp", True) else "disabled"

    commands = os.fdopen(CMD_FD, "rb", buffering=0)
    replies = os.fdopen(REPLY_FD, "wb", buffering=0)
    reader = io.BufferedReader(commands)

    def reply(obj):
        data = memoryview((json.dumps(obj, ensure_ascii=True) + "\n").encode("ascii"))
        while data:
            data = data[replies.write(data):]

    reply({"ready": True, "missing_modules": missing, "seccomp": seccomp, "capabilities": caps, "landlock": landlock,
           "python": sys.version.split()[0]})

    globals_d = make_globals(preload)
    locals_d = {}
    timeout_s = int(SETTINGS.get("timeout_s", 10))
    output_limit = int(SETTINGS.get("output_limit", 50000))
    while True:
        line = reader.readline()
        if not line:
            return
        try:
            msg = json.loads(line)
        except ValueError:
            reply({"ok": False, "error": "internal: malformed request"})
            continue
        if msg.get("cmd") == "close":
            return
        if msg.get("cmd") == "exec":
            response = run(msg["code"], globals_d, locals_d, timeout_s, output_limit)
            response["id"] = msg.get("id")
            reply(response)


if __name__ == "__main__":
    main()
