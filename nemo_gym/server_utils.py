"""Server addressing and the errors a rollout can end with.

``HEAD_SERVER_KEY_NAME`` and ``BaseServerConfig`` are upstream's names. ``ServerClient`` finds a
server's URL through the head server's instance table (``GET /server_instances``, JSON), so
replicas and servers registered by other ng-run processes are found as the Node client finds them.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional

from nemo_gym.config_types import BaseServerConfig
from nemo_gym.global_config import DEFAULT_HEAD_SERVER_PORT, HEAD_SERVER_KEY_NAME

__all__ = [
    "HEAD_SERVER_KEY_NAME",
    "BaseServerConfig",
    "ServerClient",
    "RolloutError",
    "RolloutHTTPError",
    "RolloutTimeoutError",
    "RolloutConnectionError",
    "UnknownServerError",
    "failure_reason",
]


# Failure classes (the collector's vocabulary, failures.ts CODE_CLASSES, kept equal by a test), from
# the NG_ERR_* code or the status.
_REASON_BY_CODE = {
    "NG_ERR_TIMEOUT": "timeout",
    "NG_ERR_MODEL_TIMEOUT": "timeout",
    "NG_ERR_MODEL_UNREACHABLE": "model_unreachable",
    "NG_ERR_VERIFY_FAILED": "verify_error",
    "NG_ERR_JUDGE_FAILED": "judge_failed",
    "NG_ERR_SERVER_UNREACHABLE": "server_unreachable",
    "NG_ERR_CLIENT_GONE": "cancelled",
    "NG_ERR_BAD_RESULT": "bad_result",
    "NG_ERR_BAD_JSON": "bad_result",
    "NG_ERR_BAD_ROW": "bad_row",
    "NG_ERR_GROUP_VERIFY": "group_failed",
    "NG_ERR_USER_MODEL_FAILED": "model_unreachable",
    "NG_ERR_USER_MODEL_TIMEOUT": "timeout",
    "NG_ERR_REMOTE_AGENT_FAILED": "agent_unreachable",
    "NG_ERR_REMOTE_AGENT_TIMEOUT": "timeout",
    "NG_ERR_REMOTE_AGENT_BAD_RESPONSE": "bad_result",
}


def failure_reason(status: Optional[int], code: Optional[str]) -> str:
    """The failure class of an error answer: by its NG_ERR_* code, else by its status (never by its text)."""
    if code and code in _REASON_BY_CODE:
        return _REASON_BY_CODE[code]
    if status is None:
        return "agent_unreachable"
    if status in (429, 503):
        return "rate_limited"
    if status in (408, 504):
        return "timeout"
    if status == 502:
        return "upstream_error"  # a server behind the agent (the model backend, a resources server) failed
    if status >= 500:
        return "http_5xx"
    if status == 422:
        return "bad_row"
    return "http_4xx"


class RolloutError(Exception):
    """A rollout that did not produce a result. Never a reward: the trainer decides what to do.

    Attributes: ``status`` (the HTTP status, or None when no answer came), ``reason`` (a failure
    class: ``timeout``, ``model_unreachable`` (the agent passed on NG_ERR_MODEL_UNREACHABLE),
    ``verify_error`` (NG_ERR_VERIFY_FAILED), ``judge_failed`` (NG_ERR_JUDGE_FAILED: a verifier's LLM judge gave no verdict), ``upstream_error`` (a 502 without such a code: the model
    backend or another server behind the agent failed), ``agent_unreachable``, ``rate_limited``, ``http_5xx``,
    ``http_4xx``, ``bad_row``, ``bad_result``, …), ``code`` (the servers' ``NG_ERR_*`` code, when
    the answer carried one), ``detail`` (the answer's text), ``url``, ``agent_name``, and — on an
    error answer only, as upstream — ``response_content`` (the raw answer body, bytes; NeMo-RL prints it). ``message`` is the text, as on
    aiohttp's ClientResponseError. Picklable, so it crosses Ray's actor boundary intact.
    """

    def __init__(self, message: str, *, status: Optional[int] = None, reason: str = "other", code: Optional[str] = None, detail: str = "", url: str = "", agent_name: str = "", response_content: Optional[bytes] = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason
        self.code = code
        self.detail = detail
        self.url = url
        self.agent_name = agent_name
        if response_content is not None:
            # Only on errors that carried an answer, as upstream sets it (aiohttp's error + the body bytes).
            self.response_content = response_content

    def __reduce__(self):
        return (_rebuild, (type(self), self.message, self.status, self.reason, self.code, self.detail, self.url, self.agent_name, getattr(self, "response_content", None)))

    def __str__(self) -> str:
        return self.message


def _rebuild(cls, message, status, reason, code, detail, url, agent_name, response_content):
    return cls(message, status=status, reason=reason, code=code, detail=detail, url=url, agent_name=agent_name, response_content=response_content)


class RolloutHTTPError(RolloutError):
    """The agent answered with an error status."""


class RolloutTimeoutError(RolloutError, TimeoutError):
    """No answer within the call's timeout (the connection was closed, so the rollout stopped)."""


class RolloutConnectionError(RolloutError, ConnectionError):
    """The agent could not be reached, or the connection broke before an answer."""


class UnknownServerError(RolloutError, KeyError):
    """The row names an agent the head server does not list."""

    def __str__(self) -> str:  # KeyError would quote the text
        return self.message


def _connect_host(host: str) -> str:
    """A listen address as an address to connect to (0.0.0.0 / :: -> loopback)."""
    if host in ("0.0.0.0", "", "*"):
        return "127.0.0.1"
    if host in ("::", "[::]"):
        return "::1"
    return host


def _split_url(url: str) -> tuple:
    rest = url.split("://", 1)[-1].split("/", 1)[0]
    if rest.startswith("["):
        host, _, port = rest[1:].partition("]:")
    else:
        host, _, port = rest.rpartition(":")
    return host, int(port)


class ServerClient:
    """Finds servers by instance name through the head server's instance table."""

    def __init__(self, head_server_config: Optional[BaseServerConfig] = None) -> None:
        if head_server_config is None:
            head_server_config = default_head_server_config()
        self.head_server_config = BaseServerConfig.model_validate(head_server_config) if not isinstance(head_server_config, BaseServerConfig) else head_server_config
        self._table: Dict[str, List[tuple]] = {}
        self._rr: Dict[str, int] = {}

    @property
    def head_url(self) -> str:
        h = _connect_host(self.head_server_config.host)
        h = f"[{h}]" if ":" in h else h
        return f"http://{h}:{self.head_server_config.port}"

    def _get_json(self, path: str, timeout_s: float = 10.0) -> Any:
        req = urllib.request.Request(self.head_url + path, headers={"accept": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout_s) as res:  # noqa: S310 (our own head server)
            return json.loads(res.read().decode("utf-8"))

    def server_instances(self, timeout_s: float = 10.0) -> List[Dict[str, Any]]:
        """The head server's instance table (``GET /server_instances``)."""
        try:
            table = self._get_json("/server_instances", timeout_s)
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise RolloutConnectionError(
                f"Could not read the instance table of the head server {self.head_url} ({err}). Is the stack running (RunHelper.start or ng-run), and is head_server_config its host and port?",
                reason="server_unreachable",
                url=self.head_url + "/server_instances",
            ) from None
        if not isinstance(table, list):
            raise RolloutConnectionError(f"The head server {self.head_url} answered /server_instances with {type(table).__name__}, not a list", reason="server_unreachable", url=self.head_url)
        return table

    def refresh(self) -> None:
        table: Dict[str, List[tuple]] = {}
        for inst in self.server_instances():
            if not isinstance(inst, dict) or inst.get("state", "running") != "running":
                continue
            try:
                host, port = _split_url(str(inst["url"]))
            except (KeyError, ValueError):
                continue
            table.setdefault(str(inst["name"]), []).append((_connect_host(host), port))
        self._table = table

    def group_verifiers(self, timeout_s: float = 10.0) -> Dict[str, Any]:
        """Agents whose rollouts are scored as groups (``GET /group_verifiers``): name -> {server, group_wait_timeout_s, group_member_failure}."""
        try:
            table = self._get_json("/group_verifiers", timeout_s)
        except (urllib.error.URLError, OSError, ValueError):
            return {}
        return table if isinstance(table, dict) else {}

    def names(self) -> List[str]:
        return sorted(self._table)

    def address(self, server_name: str) -> Optional[tuple]:
        """(host, port) of one running replica of ``server_name`` (round robin), or None."""
        addrs = self._table.get(server_name)
        if not addrs:
            return None
        i = self._rr.get(server_name, 0)
        self._rr[server_name] = i + 1
        return addrs[i % len(addrs)]


_default_head: Optional[BaseServerConfig] = None


def set_default_head_server_config(config: Optional[BaseServerConfig]) -> None:
    """The head server used when run_examples gets none (RunHelper.start sets it)."""
    global _default_head
    _default_head = config


def default_head_server_config() -> BaseServerConfig:
    if _default_head is not None:
        return _default_head
    return BaseServerConfig(host="127.0.0.1", port=DEFAULT_HEAD_SERVER_PORT)
