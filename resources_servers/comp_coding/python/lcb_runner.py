"""Grades one Python program against LiveCodeBench-style unit tests.

Runs inside the @nemo-gym/sandbox launcher, in one of two modes:

* one process per verify: ``lcb_runner.py`` reads one JSON request on stdin and writes one JSON
  answer line on the descriptor it saved from stdout;
* warm pool: ``lcb_runner.py --serve`` imports everything once, applies the sandbox's confinement
  (without the seccomp filter), then serves requests read as JSON lines on descriptor 3: each
  request is graded in a forked child that installs the seccomp filter first; the answer goes
  back on descriptor 4.

Request: {"code", "inputs": [str], "outputs": [str], "fn_name": str|null, "timeout": int,
"nonce": str}. Answer: {"nonce", "result": [true | false | -1..-4], "metadata": {...}|null}.

Grading semantics follow LiveCodeBench's runner as NeMo Gym uses it (see the server README):
stdio programs are wrapped into a function and run once per test with a mocked stdin and
captured stdout; call-based programs are called with JSON-decoded arguments; results stop at the
first failing test; -2 wrong answer, -3 time limit, -4 runtime or grading error, -1 no answer
within the global time limit. Later upstream fixes are included: an iterable stdin mock and a
float tolerance in call-based comparisons.
"""

import ast
import faulthandler
import json
import os
import resource  # noqa: F401  (imported here so forked graders do not import it again)
import select
import shutil  # noqa: F401
import signal
import subprocess  # noqa: F401
import sys
import time
import traceback
import types
from decimal import Decimal
from io import StringIO
from unittest.mock import mock_open, patch

# Modules star-imported, then imported by name, ahead of every program (the grading
# environment programs are written against: `Counter`, `deque`, `gcd`, `List`... need no import).
_STAR = ["string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
         "statistics", "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing"]
_PLAIN = _STAR[:-2]
PRELUDE = (
    "".join("from %s import *\n" % m for m in _STAR)
    + "".join("import %s\n" % m for m in _PLAIN)
    + "sys.setrecursionlimit(50000)\n"
)

TRUNCATE_AT = 300
MEMORY_GUARD_BYTES = 4 * 1024 ** 3

# Imports the prelude needs, done once (the warm pool's children inherit them).
for _m in _STAR:
    __import__(_m)


def truncatefn(value, length=TRUNCATE_AT):
    s = value if isinstance(value, str) else str(value)
    if len(s) <= length:
        return s
    return s[: length // 2] + "...(truncated) ..." + s[-length // 2:]


class TimeoutException(Exception):
    pass


def _on_alarm(signum, frame):
    raise TimeoutException


class Capturing(list):
    """Collects what the program prints through sys.stdout during one test."""

    def __enter__(self):
        self._saved = sys.stdout
        self._buf = StringIO()
        # Closing the capture buffer is a no-op taking one argument (as the reference runner's).
        self._buf.close = lambda x: 1
        sys.stdout = self._buf
        return self

    def __exit__(self, *exc):
        self.append(self._buf.getvalue())
        del self._buf
        sys.stdout = self._saved


class _StdinBytes:
    def __init__(self, text):
        self._data = text.encode("utf-8")

    def read(self, *args):
        return self._data

    def readline(self, *args):
        return self._data.split(b"\n")[0] + b"\n"


class FakeStdin:
    """sys.stdin during one test: read() is the whole input, readline() successive lines,
    readlines() the input split on newlines, iteration yields lines (upstream's later fix)."""

    def __init__(self, text):
        self._text = text
        self._lines = StringIO(text)
        self.buffer = _StdinBytes(text)

    def read(self, *args):
        return self._text

    def readline(self, *args):
        return self._lines.readline(*args)

    def readlines(self, *args):
        return self._text.split("\n")

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._lines)

    def __getattr__(self, name):
        return getattr(self._lines, name)


def call_with_input(method, text):
    if isinstance(text, list):
        text = "\n".join(text)
    line_iter = iter(text.split("\n"))
    fake = FakeStdin(text)
    # Patches are entered bottom-up: the real stdin object's methods are replaced first (code that
    # bound `stdin` at compile time sees those), then sys.stdin itself, then builtins.open.
    @patch("builtins.open", mock_open(read_data=text))
    @patch("sys.stdin", fake)
    @patch("sys.stdin.readline", lambda *args: next(line_iter))
    @patch("sys.stdin.readlines", lambda *args: text.split("\n"))
    @patch("sys.stdin.read", lambda *args: text)
    def inner(fn):
        try:
            return fn()
        except SystemExit:
            pass

    return inner(method)


def hoist_main_guard(code):
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return code


def wrap_in_function(code):
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        others = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        fields = dict(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=others,
            decorator_list=[],
            lineno=-1,
        )
        if "type_params" in ast.FunctionDef._fields:
            fields["type_params"] = []
        fn = ast.FunctionDef(**fields)
        return PRELUDE + "\n" + ast.unparse(imports) + "\n" + ast.unparse(fn)
    except Exception:
        return code


def load_program(code, timeout):
    signal.alarm(timeout)
    try:
        module = types.ModuleType("tmp_sol", "")
        exec(code, module.__dict__)
        target = module.Solution() if "class Solution" in code else module
        assert target is not None
    finally:
        signal.alarm(0)
    return target


def lookup(target, name):
    try:
        assert hasattr(target, name)
        return getattr(target, name)
    except Exception:
        return None


def _decimals(line):
    try:
        return True, [Decimal(tok) for tok in line.split()]
    except Exception:
        return False, []


def stripped_lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def _failure(results, exc, inputs, expected):
    if "timeoutexception" in repr(exc).lower():
        results.append(-3)
        return results, {
            "error": repr(exc),
            "error_code": -3,
            "error_message": "Time Limit Exceeded",
            "inputs": truncatefn(inputs),
            "expected": truncatefn(expected),
        }
    results.append(-4)
    return results, {
        "error": repr(exc),
        "error_code": -4,
        "error_message": "Runtime Error",
        "inputs": truncatefn(inputs),
        "expected": truncatefn(expected),
        "traceback": traceback.format_exc(),
    }


def _isclose(a, b):
    a, b = float(a), float(b)
    if a == b:
        return True
    if a != a or b != b or a in (float("inf"), float("-inf")) or b in (float("inf"), float("-inf")):
        return False
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)


def grade_call_based(code, inputs, outputs, fn_name, timeout):
    target = load_program(PRELUDE + "\n\n" + code, timeout)
    if target is None:
        return None
    method = lookup(target, fn_name)
    if method is None:
        return None
    args_list = [[json.loads(line) for line in raw.split("\n")] for raw in inputs]
    expected_list = [json.loads(raw) for raw in outputs]
    total = 0
    results = []
    for args, expected in zip(args_list, expected_list):
        signal.alarm(timeout)
        faulthandler.enable()
        try:
            start = time.time()
            got = method(*args)
            total += time.time() - start
            signal.alarm(0)
            if isinstance(got, tuple):
                got = list(got)
            ok = got == expected
            try:
                ok = ok or (json.dumps(got) == json.dumps(expected))
            except Exception:
                pass
            try:
                ok = ok or _isclose(got, expected)
            except Exception:
                pass
            results.append(ok)
            if not ok:
                return results, {
                    "output": truncatefn(got),
                    "inputs": truncatefn(args),
                    "expected": truncatefn(expected),
                    "error_code": -2,
                    "error_message": "Wrong Answer",
                }
        except Exception as exc:
            signal.alarm(0)
            return _failure(results, exc, args, expected)
        finally:
            signal.alarm(0)
            faulthandler.disable()
    return results, {"execution time": total}


def grade_stdio(code, inputs, outputs, timeout):
    code = wrap_in_function(hoist_main_guard(code))
    target = load_program(code, timeout)
    if target is None:
        return None
    method = lookup(target, "wrapped_function")
    if method is None:
        return None
    results = []
    total = 0
    for given, expected in zip(inputs, outputs):
        signal.alarm(timeout)
        faulthandler.enable()
        with Capturing() as captured:
            try:
                start = time.time()
                call_with_input(method, given)
                total += time.time() - start
                signal.alarm(0)
            except Exception as exc:
                signal.alarm(0)
                return _failure(results, exc, given, expected)
            finally:
                signal.alarm(0)
                faulthandler.disable()
        printed = captured[0]
        got_lines = stripped_lines(printed)
        want_lines = stripped_lines(expected)
        wrong = {"output": truncatefn(printed), "inputs": truncatefn(given), "expected": truncatefn(expected), "error_code": -2}
        if len(got_lines) != len(want_lines):
            results.append(-2)
            wrong["error_message"] = "Wrong answer: mismatched output length"
            return results, wrong
        for idx, (got, want) in enumerate(zip(got_lines, want_lines)):
            wrong["error_message"] = "Wrong answer at output_line_idx=%d: %s != %s" % (idx, truncatefn(got), truncatefn(want))
            if got == want:
                continue
            ok_got, dec_got = _decimals(got)
            if not ok_got:
                results.append(-2)
                return results, wrong
            ok_want, dec_want = _decimals(want)
            if not ok_want:
                results.append(-2)
                return results, wrong
            if dec_got == dec_want:
                continue
            results.append(-2)
            return results, wrong
        results.append(True)
    return results, {"execution time": total}


def _raise_soft_limit(kind, target):
    import resource

    soft, hard = resource.getrlimit(kind)
    if soft < target:  # RLIM_INFINITY is -1: an unlimited soft limit is capped too
        try:
            resource.setrlimit(kind, (target, hard))
        except ValueError:
            pass


def guard():
    """What the reference runner disables before grading (programs see the same environment)."""
    import builtins
    import resource
    import shutil
    import subprocess

    _raise_soft_limit(resource.RLIMIT_DATA, MEMORY_GUARD_BYTES)
    _raise_soft_limit(resource.RLIMIT_STACK, MEMORY_GUARD_BYTES)
    faulthandler.disable()
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
                 "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown",
                 "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"):
        setattr(os, name, None)
    shutil.rmtree = None
    shutil.move = None
    shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


def run_tests(req):
    """The grading of one request: (result list, metadata)."""
    signal.signal(signal.SIGALRM, _on_alarm)
    guard()
    timeout = int(req["timeout"])
    fn_name = req.get("fn_name")
    signal.alarm(timeout)
    try:
        if fn_name is None:
            results, metadata = grade_stdio(req["code"], req["inputs"], req["outputs"], timeout)
        else:
            results, metadata = grade_call_based(req["code"], req["inputs"], req["outputs"], fn_name, timeout)
        return results, metadata
    except Exception as exc:
        return [-4], {"error_code": -4, "error_message": "Error during testing: %s" % exc}
    finally:
        signal.alarm(0)


def _plain(value):
    """A result entry as JSON: booleans and ints as they are, anything else by its truth value."""
    if isinstance(value, (bool, int)):
        return value
    try:
        return bool(value)
    except Exception:
        return False


def answer_line(req, results, metadata):
    try:
        meta = json.loads(json.dumps(metadata, default=str)) if metadata is not None else None
    except Exception as exc:  # e.g. a float that JSON cannot hold
        meta = {"error_code": -4, "error_message": "Error during testing: %s" % exc}
    return (json.dumps({"nonce": req.get("nonce"), "result": [_plain(r) for r in results], "metadata": meta}) + "\n").encode()


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _silence_std_fds():
    """Programs print to sys.stdout (captured); whatever reaches descriptors 0-2 goes nowhere."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _set_cpu_limit(seconds):
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    except (ValueError, OSError):
        pass


def global_timeout(req):
    return (int(req["timeout"]) + 1) * len(req["inputs"]) + 5


def one_shot():
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    req = json.loads(b"".join(chunks))
    out = os.dup(1)
    _silence_std_fds()
    sys.set_int_max_str_digits(50000)
    results, metadata = run_tests(req)
    _write_all(out, answer_line(req, results, metadata))


def serve():
    import ng_sandbox_confine

    layers = ng_sandbox_confine.apply(seccomp=False)
    commands = os.fdopen(3, "rb", buffering=0)
    replies = 4
    _silence_std_fds()
    sys.set_int_max_str_digits(50000)
    _write_all(replies, (json.dumps({"ready": True, "layers": layers}) + "\n").encode())
    reader = __import__("io").BufferedReader(commands)
    while True:
        line = reader.readline()
        if not line:
            return
        req = json.loads(line)
        _write_all(replies, grade_in_child(req))


def grade_in_child(req):
    """Forks; the child installs the seccomp filter, grades and reports through a pipe. The parent
    kills the child at the global time limit and always reaps it."""
    n = len(req["inputs"])
    limit = global_timeout(req)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            os.close(3)
            os.close(4)
            import ng_sandbox_confine

            ng_sandbox_confine.child_seccomp()
            _set_cpu_limit(limit)
            results, metadata = run_tests(req)
            _write_all(wfd, answer_line(req, results, metadata))
        finally:
            os._exit(0)
    os.close(wfd)
    data = b""
    deadline = time.monotonic() + limit
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([rfd], [], [], left)
            if not ready:
                break
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(rfd)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
    for line in reversed(data.split(b"\n")):
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("nonce") == req.get("nonce"):
            return line + b"\n"
    return (json.dumps({"nonce": req.get("nonce"), "result": [-1] * n, "metadata": None, "global_timeout": True}) + "\n").encode()


if __name__ == "__main__":
    if "--serve" in sys.argv[1:]:
        serve()
    else:
        one_shot()
