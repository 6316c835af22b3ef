"""``RunHelper``: start this stack (``ng-run``, Node) from Python, watch it, stop it.

    rh = RunHelper()
    rh.start(global_config_dict_parser_config=GlobalConfigDictParserConfig(
        dotenv_path=..., initial_global_config_dict={...}, skip_load_from_cli=True))
    rh.poll()        # raises RuntimeError naming a server that died
    rh.shutdown()    # idempotent; also runs at interpreter exit

``start`` runs ``node packages/cli/bin/ng-run.js`` as a child in its own process group (session),
hands it the initial config dict (``NEMO_GYM_INITIAL_CONFIG_JSON``), the env.yaml to read and the
command line, and returns when every server answers. ng-run merges the config as upstream does,
starts the head server and one process per server instance. The child watches a pipe held by this
process: when this process dies, even by SIGKILL, ng-run stops every server.

The project root is ``NEMO_GYM_ROOT`` or the folder above this package; ``node`` is
``NEMO_GYM_NODE`` or the first ``node`` on PATH.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional

from nemo_gym import PARENT_DIR
from nemo_gym.config_types import BaseServerConfig
from nemo_gym.global_config import (
    DEFAULT_HEAD_SERVER_PORT,
    HEAD_SERVER_KEY_NAME,
    GlobalConfigDictParserConfig,
    to_plain,
)
from nemo_gym.server_utils import ServerClient, set_default_head_server_config

__all__ = ["RunHelper", "GlobalConfigDictParserConfig", "ServerInstanceDisplayConfig", "NeMoGymStartError", "project_root", "node_executable"]

#: Upstream-only keys the trainers set that have no meaning for this stack: accepted, passed on
#: unused, and named once in a log line. (global_aiohttp_connector_limit_per_host is used: it caps
#: run_examples' connections per agent.)
UPSTREAM_ONLY_KEYS = (
    "uv_venv_dir",
    "uv_cache_dir",
    "skip_venv_if_present",
    "ray_head_node_address",
    "global_aiohttp_connector_limit",
    "head_server_deps",
    "python_version",
    "pip_install_verbose",
    "uv_pip_set_python",
    "num_gpu_nodes",
)

_READY_RE = re.compile(r"^All (\d+) server\(s\) ready in ")
_SERVER_RE = re.compile(r"Server `([^`]+)`")
_logged_upstream_keys: set = set()
_connection_limit: Optional[int] = None


def _configured_connection_limit() -> Optional[int]:
    return _connection_limit


class NeMoGymStartError(RuntimeError):
    """The stack did not start: a bad config, a server that did not come up, no node, no build."""


def project_root() -> Path:
    """The project root: NEMO_GYM_ROOT, else the folder above this package. Raises if it is not one."""
    env = os.environ.get("NEMO_GYM_ROOT")
    root = Path(env).expanduser().resolve() if env else Path(PARENT_DIR)
    if not (root / "packages" / "cli" / "bin" / "ng-run.js").is_file():
        where = f"NEMO_GYM_ROOT={env}" if env else f"the folder above the nemo_gym package ({root})"
        raise NeMoGymStartError(
            f"{where} is not a NeMo Gym (TypeScript) checkout: packages/cli/bin/ng-run.js is missing. "
            "Install the package from the repository (pip install -e <repo>, or PYTHONPATH=<repo>), or set NEMO_GYM_ROOT to the repository."
        )
    if not (root / "packages" / "cli" / "dist" / "src" / "main.js").is_file():
        raise NeMoGymStartError(f"The project at {root} is not built: run `pnpm install && pnpm build` there first.")
    return root


def node_executable() -> str:
    """NEMO_GYM_NODE, else `node` on PATH; Node 20.10 or newer."""
    configured = os.environ.get("NEMO_GYM_NODE")
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise NeMoGymStartError(f"NEMO_GYM_NODE={configured} is not an executable file. Point it at Node.js 20.10 or newer, or unset it to use `node` from PATH.")
        return configured
    node = shutil.which("node")
    if not node:
        raise NeMoGymStartError("Could not find `node` on PATH. Install Node.js 20.10 or newer, or set NEMO_GYM_NODE to its path.")
    return node


@dataclass
class ServerInstanceDisplayConfig:
    process_name: str
    server_type: str
    name: str
    dir_path: str
    entrypoint: str
    host: Optional[str] = None
    port: Optional[int] = None
    pid: Optional[int] = None
    config_path: str = ""
    url: Optional[str] = None

    def model_dump(self, mode: str = "python") -> Dict[str, Any]:
        return asdict(self)


def _proc_start_time(pid: int) -> Optional[str]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields and fields[0] == "Z":
        return None  # a zombie has exited
    return fields[19] if len(fields) > 19 else None


def _descendants(root_pid: int) -> Dict[int, str]:
    """Every live process under root_pid (Linux /proc), with its start time (guards against pid reuse)."""
    children: Dict[int, List[int]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(pid)
    out: Dict[int, str] = {}
    todo = list(children.get(root_pid, []))
    while todo:
        pid = todo.pop()
        st = _proc_start_time(pid)
        if st is not None:
            out[pid] = st
        todo.extend(children.get(pid, []))
    return out


class RunHelper:
    """Starts and stops the stack (ng-run and its servers) for a trainer."""

    def __init__(self) -> None:
        self._process: Optional[subprocess.Popen] = None
        self._reader: Optional[threading.Thread] = None
        self._tail: Deque[str] = deque(maxlen=400)
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._shut = False
        self._known_pids: Dict[int, str] = {}
        self._owner_pid: Optional[int] = None
        self._server_instance_display_configs: List[ServerInstanceDisplayConfig] = []
        self._server_client: Optional[ServerClient] = None
        self.head_server_config: Optional[BaseServerConfig] = None
        self.global_config_dict: Dict[str, Any] = {}
        self.echo = os.environ.get("NEMO_GYM_QUIET", "") not in ("1", "true")

    # ---------------------------------------------------------------- start
    def start(self, global_config_dict_parser_config: Optional[GlobalConfigDictParserConfig] = None) -> None:
        global _connection_limit
        if self._process is not None and not self._shut:
            raise RuntimeError("RunHelper.start was called twice: shut the running stack down first (shutdown()).")
        cfg = global_config_dict_parser_config or GlobalConfigDictParserConfig()
        if isinstance(cfg, dict):
            cfg = GlobalConfigDictParserConfig(**cfg)
        initial = to_plain(cfg.initial_global_config_dict) if cfg.initial_global_config_dict is not None else {}
        if not isinstance(initial, dict):
            raise TypeError("initial_global_config_dict must be a dict or a DictConfig")
        self.global_config_dict = initial
        root = project_root()
        node = node_executable()

        unused = sorted(k for k in UPSTREAM_ONLY_KEYS if k in initial)
        new = [k for k in unused if k not in _logged_upstream_keys]
        if new:
            _logged_upstream_keys.update(new)
            print(f"[nemo_gym] Accepted and unused by this stack (no Python venvs or Ray here): {', '.join(new)}", flush=True)
        limit = initial.get("global_aiohttp_connector_limit_per_host")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            _connection_limit = limit

        head = initial.get(HEAD_SERVER_KEY_NAME) or {}
        if not isinstance(head, dict):
            raise NeMoGymStartError(f"{HEAD_SERVER_KEY_NAME} must be a mapping {{host, port}}, got {head!r}")
        head_host = str(head.get("host") or initial.get("default_host") or "127.0.0.1")
        head_port = int(head.get("port") or DEFAULT_HEAD_SERVER_PORT)

        if initial.get("dry_run"):
            # Upstream's dry run prepares the servers' Python venvs without starting them; this stack has none.
            print("[nemo_gym] dry_run: nothing to prepare for this stack (no Python venvs); not starting the servers.", flush=True)
            self._shut = True
            return

        argv = [node, str(root / "packages" / "cli" / "bin" / "ng-run.js")]
        if not cfg.skip_load_from_cli:
            argv += sys.argv[1:]
        env = dict(os.environ)
        env["NEMO_GYM_INITIAL_CONFIG_JSON"] = json.dumps(initial)
        env["NEMO_GYM_ROOT"] = str(root)
        env["NEMO_GYM_EXIT_ON_STDIN_CLOSE"] = "1"
        env.pop("NEMO_GYM_CONFIG_DICT", None)
        if cfg.skip_load_from_dotenv:
            env["NEMO_GYM_SKIP_DOTENV"] = "1"
        elif cfg.dotenv_path is not None:
            env["NEMO_GYM_DOTENV_PATH"] = str(Path(cfg.dotenv_path).expanduser().absolute())
        startup_timeout_s = float(initial.get("startup_timeout_s") or 60)

        self._tail.clear()
        self._ready.clear()
        self._shut = False
        self._process = subprocess.Popen(
            argv,
            cwd=str(root),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
        self._owner_pid = os.getpid()
        atexit.register(self.shutdown)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget_in_child)
        self._reader = threading.Thread(target=self._read_output, name="nemo-gym-ng-run-output", daemon=True)
        self._reader.start()

        print("Waiting for head server to spin up", flush=True)
        deadline = time.monotonic() + startup_timeout_s + 60
        while not self._ready.wait(0.1):
            if self._process.poll() is not None:
                self._reader.join(2)
                text = self._failure_text()
                self.shutdown(quiet=True)
                raise NeMoGymStartError(f"ng-run exited with code {self._process.returncode} before every server was up:\n{text}")
            if time.monotonic() > deadline:
                text = self._failure_text()
                self.shutdown(quiet=True)
                raise NeMoGymStartError(f"The servers did not come up within {startup_timeout_s + 60:.0f} s (startup_timeout_s={startup_timeout_s:g} plus 60 s):\n{text}")
        self.head_server_config = BaseServerConfig(host=head_host, port=head_port)
        set_default_head_server_config(self.head_server_config)
        self._server_client = ServerClient(self.head_server_config)
        self._load_display_configs()
        self._known_pids = _descendants(self._process.pid)
        print(f"All {len(self._server_instance_display_configs)} / {len(self._server_instance_display_configs)} servers ready!", flush=True)
        self.display_server_instance_info()

    def _read_output(self) -> None:
        proc = self._process
        assert proc is not None and proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            self._tail.append(line)
            if self.echo:
                try:
                    sys.stdout.write(line + "\n")
                    sys.stdout.flush()
                except (OSError, ValueError):
                    pass
            if not self._ready.is_set() and _READY_RE.match(line):
                self._ready.set()
        proc.stdout.close()

    def _failure_text(self) -> str:
        lines = list(self._tail)
        # ng-run's own error starts with "ng-run: "; keep it and what follows (the server's log tail).
        for i, line in enumerate(lines):
            if line.startswith("ng-run: "):
                return "\n".join(lines[i:]).strip()
        return "\n".join(lines[-40:]).strip() or "(ng-run printed nothing)"

    def _load_display_configs(self) -> None:
        self._server_instance_display_configs = []
        try:
            table = self._server_client.server_instances(timeout_s=10) if self._server_client else []
        except Exception:
            table = []
        for inst in table:
            url = str(inst.get("url", ""))
            hostport = url.split("://", 1)[-1]
            host, _, port = hostport.rpartition(":")
            self._server_instance_display_configs.append(
                ServerInstanceDisplayConfig(
                    process_name=str(inst.get("name")),
                    server_type=str(inst.get("server_type")),
                    name=str(inst.get("impl")),
                    dir_path=str(Path(PARENT_DIR) / str(inst.get("server_type")) / str(inst.get("impl"))),
                    entrypoint="app.ts",
                    host=host or None,
                    port=int(port) if port.isdigit() else None,
                    pid=inst.get("pid"),
                    config_path=str(inst.get("name")),
                    url=url or None,
                )
            )

    # ---------------------------------------------------------------- watch
    def display_server_instance_info(self) -> None:
        if not self._server_instance_display_configs:
            print("No server instances to display.")
            return
        bar = "#" * 100
        print(f"\n{bar}\n#\n# Server Instances\n#\n{bar}\n")
        for i, inst in enumerate(self._server_instance_display_configs, 1):
            print(f"[{i}] {inst.process_name} ({inst.server_type}/{inst.name})")
            print(json.dumps(inst.model_dump(), indent=4))
        print(f"{bar}\n", flush=True)

    def poll(self) -> None:
        """Raises RuntimeError naming a server (or ng-run itself) that is no longer running."""
        proc = self._process
        if proc is None or self._shut:
            raise RuntimeError("The NeMo Gym stack is not running (start() was not called, or shutdown() was).")
        if proc.poll() is not None:
            if self._reader is not None:
                self._reader.join(2)
            text = self._failure_text()
            m = _SERVER_RE.search(text)
            if m:
                raise RuntimeError(f"Process `{m.group(1)}` finished unexpectedly! ng-run stopped the other servers (exit code {proc.returncode}):\n{text}")
            raise RuntimeError(f"Head server finished unexpectedly! ng-run exited with code {proc.returncode}:\n{text}")
        try:
            table = self._server_client.server_instances(timeout_s=5) if self._server_client else []
        except Exception as err:
            # ng-run closes the head server while it stops the others after a death: let it finish and say which.
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"Head server finished unexpectedly! It does not answer: {err}") from None
            return self.poll()
        for inst in table:
            if isinstance(inst, dict) and inst.get("state") == "exited":
                how = inst.get("signal") or f"exit code {inst.get('exit_code')}"
                raise RuntimeError(f"Process `{inst.get('name')}` finished unexpectedly! ({how})")

    def wait_for_spinup(self) -> None:
        """start() already waits; kept for callers of upstream's method."""
        self.poll()

    def run_forever(self) -> None:
        try:
            while True:
                self.poll()
                time.sleep(60)
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()

    # ---------------------------------------------------------------- stop
    def shutdown(self, quiet: bool = False) -> None:
        """Stops ng-run and every server (SIGTERM, then SIGKILL); idempotent."""
        if self._owner_pid is not None and self._owner_pid != os.getpid():
            return  # a forked copy of the trainer: the stack belongs to the process that started it
        with self._lock:
            proc = self._process
            if proc is None or (self._shut and proc.poll() is not None and not self._alive_known()):
                self._shut = True
                return
            self._shut = True
            if not quiet:
                print("Stopping NeMo Gym servers...", flush=True)
            known = dict(self._known_pids)
            if proc.poll() is None:
                known.update(_descendants(proc.pid))
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    proc.wait(timeout=15)  # ng-run gives its servers 5 s, then SIGKILLs them
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    proc.wait(timeout=5)
            # Anything of the stack still alive (it would be reparented, not gone): kill it.
            deadline = time.monotonic() + 5
            while True:
                alive = [pid for pid, st in known.items() if _proc_start_time(pid) == st]
                if not alive:
                    break
                for pid in alive:
                    for kill in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
                        try:
                            kill(pid)
                        except (ProcessLookupError, PermissionError):
                            pass
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            if self._reader is not None:
                self._reader.join(5)
            self._known_pids = {}
            if self.head_server_config is not None:
                set_default_head_server_config(None)
            try:
                atexit.unregister(self.shutdown)
            except Exception:
                pass
            if not quiet:
                print("NeMo Gym finished!", flush=True)

    def _forget_in_child(self) -> None:
        """In a process forked from the trainer: drop its copy of the pipe ng-run watches (so the
        stack still stops when the trainer dies), and never stop the trainer's stack from here."""
        proc = self._process
        if proc is None or proc.stdin is None or self._owner_pid == os.getpid():
            return
        try:
            fd = proc.stdin.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def _alive_known(self) -> bool:
        return any(_proc_start_time(pid) == st for pid, st in self._known_pids.items())
