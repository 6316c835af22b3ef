"""Runs a harness command (and the git steps around it) inside the sandbox, for harness_agent.

Requests arrive as JSON lines on descriptor 3 and replies leave as JSON lines on descriptor 4
(the session protocol of @nemo-gym/sandbox); the first reply line is a hello. Two requests:

``{"op": "bridge", "port": int, "socket": str}``: listen on 127.0.0.1:port inside the sandbox and
forward every connection to the Unix socket ``socket`` (in the work folder), behind which the
agent reaches the model server and nothing else. Used where the sandbox has its own network
namespace (bubblewrap): the model URL is the only way out. Reply ``{"port": int}``.

``{"op": "exec", "argv": [...], "cwd": str, "env": {...}, "timeout_s": number,
"max_output_bytes": int, "stdin": str (optional)}``: runs argv in a fresh session (its own process
group), stdout and stderr kept apart, each cut at max_output_bytes (more stops the command). At the
time limit the whole group is killed; when the command ends, whatever it left running in its group
is killed too. Reply ``{"returncode", "signal", "stdout", "stderr", "timed_out", "truncated",
"duration_ms"}``; ``{"error": str}`` when the program cannot start.
"""
import json
import os
import selectors
import signal
import socket
import subprocess
import threading
import time

REQUESTS = os.fdopen(3, "r", encoding="utf-8")
REPLIES = os.fdopen(4, "w", encoding="utf-8")


def reply(msg):
    REPLIES.write(json.dumps(msg) + "\n")
    REPLIES.flush()


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve_bridge(listener, path):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        try:
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            up.connect(path)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=pump, args=(conn, up), daemon=True).start()
        threading.Thread(target=pump, args=(up, conn), daemon=True).start()


def bridge(req):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(req.get("port") or 0)))
    listener.listen(128)
    threading.Thread(target=serve_bridge, args=(listener, req["socket"]), daemon=True).start()
    return {"port": listener.getsockname()[1]}


def run(req):
    timeout_s = float(req.get("timeout_s") or 600)
    cap = int(req.get("max_output_bytes") or 8 * 1024 * 1024)
    env = dict(os.environ)
    env.update(req.get("env") or {})
    stdin_text = req.get("stdin")
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            req["argv"],
            cwd=req.get("cwd") or os.getcwd(),
            env=env,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc)}
    if stdin_text is not None:
        try:
            proc.stdin.write(stdin_text.encode("utf-8"))
            proc.stdin.close()
        except OSError:
            pass
    deadline = started + timeout_s
    kept = {"stdout": [], "stderr": []}
    sizes = {"stdout": 0, "stderr": 0}
    truncated = False
    timed_out = False
    sel = selectors.DefaultSelector()
    for name, f in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        os.set_blocking(f.fileno(), False)
        sel.register(f.fileno(), selectors.EVENT_READ, name)
    open_fds = 2
    exited_at = None
    try:
        while open_fds > 0 and not truncated:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            # A background child may hold the pipes open after the command ended.
            if exited_at is not None and now - exited_at > 0.5:
                break
            for key, _ in sel.select(min(deadline - now, 0.1)):
                try:
                    data = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fd)
                    open_fds -= 1
                    continue
                name = key.data
                room = cap - sizes[name]
                if len(data) > room:
                    data = data[:room]
                    truncated = True
                kept[name].append(data)
                sizes[name] += len(data)
        if not timed_out and not truncated:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        sel.close()
        kill_group(proc.pid)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        proc.stdout.close()
        proc.stderr.close()
    code = proc.returncode
    return {
        "returncode": None if (timed_out or truncated or code is None or code < 0) else code,
        "signal": signal.Signals(-code).name if code is not None and code < 0 else None,
        "stdout": b"".join(kept["stdout"]).decode("utf-8", errors="replace"),
        "stderr": b"".join(kept["stderr"]).decode("utf-8", errors="replace"),
        "timed_out": timed_out,
        "truncated": truncated,
        "duration_ms": int((time.monotonic() - started) * 1000),
    }


def main():
    reply({"hello": "harness", "cwd": os.getcwd(), "pid": os.getpid()})
    for line in REQUESTS:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            reply(bridge(req) if req.get("op") == "bridge" else run(req))
        except Exception as exc:  # the agent sees why, the runner keeps serving
            reply({"error": "%s: %s" % (type(exc).__name__, exc)})


if __name__ == "__main__":
    main()
