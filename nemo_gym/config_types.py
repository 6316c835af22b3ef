"""Config value types shared by the other modules (upstream: pydantic models; here plain classes)."""
from __future__ import annotations

from typing import Any, Dict


class BaseServerConfig:
    """Where a server listens: ``BaseServerConfig(host="127.0.0.1", port=11000)``.

    Upstream's is a pydantic model with the two fields; this one validates them the same way
    (``port`` must be an integer 1..65535, a numeric string is accepted) and offers
    ``model_dump()``/``model_validate()`` for code that uses those.
    """

    __slots__ = ("host", "port")

    def __init__(self, host: str, port: int) -> None:
        if not isinstance(host, str) or not host:
            raise ValueError(f"BaseServerConfig.host must be a non-empty string, got {host!r}")
        if isinstance(port, bool):
            raise ValueError(f"BaseServerConfig.port must be an integer, got {port!r}")
        try:
            port_int = int(port)
        except (TypeError, ValueError):
            raise ValueError(f"BaseServerConfig.port must be an integer, got {port!r}") from None
        if port_int != port and not (isinstance(port, str) and port.strip().isdigit()):
            raise ValueError(f"BaseServerConfig.port must be an integer, got {port!r}")
        if not 1 <= port_int <= 65535:
            raise ValueError(f"BaseServerConfig.port must be between 1 and 65535, got {port_int}")
        self.host = host
        self.port = port_int

    @classmethod
    def model_validate(cls, value: Any) -> "BaseServerConfig":
        if isinstance(value, cls):
            return value
        return cls(host=value["host"], port=value["port"])

    def model_dump(self, mode: str = "python") -> Dict[str, Any]:
        return {"host": self.host, "port": self.port}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BaseServerConfig) and (self.host, self.port) == (other.host, other.port)

    def __hash__(self) -> int:
        return hash((self.host, self.port))

    def __repr__(self) -> str:
        return f"BaseServerConfig(host={self.host!r}, port={self.port})"

    def __reduce__(self):
        return (BaseServerConfig, (self.host, self.port))
