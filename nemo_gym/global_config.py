"""Upstream's global-config names: the reserved keys, and ``GlobalConfigDictParserConfig``.

The config itself is merged by ``ng-run`` (Node), exactly as upstream's GlobalConfigDictParser
merges it: the files named in ``config_paths`` (relative paths against the project root), then
``env.yaml`` (``dotenv_path``), then ``initial_global_config_dict``, then the command line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, ClassVar, Dict, Mapping, Optional, Union

NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME = "NEMO_GYM_CONFIG_DICT"
NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME = "NEMO_GYM_CONFIG_PATH"
CONFIG_PATHS_KEY_NAME = "config_paths"
ENTRYPOINT_KEY_NAME = "entrypoint"
DEFAULT_HOST_KEY_NAME = "default_host"
HEAD_SERVER_KEY_NAME = "head_server"
DISALLOWED_PORTS_KEY_NAME = "disallowed_ports"
HEAD_SERVER_DEPS_KEY_NAME = "head_server_deps"
PYTHON_VERSION_KEY_NAME = "python_version"
PORT_RANGE_LOW_KEY_NAME = "port_range_low"
PORT_RANGE_HIGH_KEY_NAME = "port_range_high"
POLICY_BASE_URL_KEY_NAME = "policy_base_url"
POLICY_API_KEY_KEY_NAME = "policy_api_key"  # pragma: allowlist secret
POLICY_MODEL_NAME_KEY_NAME = "policy_model_name"
DEFAULT_HEAD_SERVER_PORT = 11000
NEMO_GYM_RESERVED_TOP_LEVEL_KEYS = [
    CONFIG_PATHS_KEY_NAME,
    ENTRYPOINT_KEY_NAME,
    DEFAULT_HOST_KEY_NAME,
    HEAD_SERVER_KEY_NAME,
    DISALLOWED_PORTS_KEY_NAME,
    HEAD_SERVER_DEPS_KEY_NAME,
    PYTHON_VERSION_KEY_NAME,
]

ConfigLike = Union[Mapping[str, Any], Any]


@dataclass
class GlobalConfigDictParserConfig:
    """How to build the global config dict (upstream's fields and defaults).

    - ``dotenv_path``: the ``env.yaml`` to merge (default: ``env.yaml`` at the project root);
      a path that does not exist is skipped, as upstream skips it.
    - ``initial_global_config_dict``: a dict or an omegaconf ``DictConfig``; merged over the
      config files and env.yaml, under the command line.
    - ``skip_load_from_cli``: do not read this process's command line (``sys.argv[1:]``, upstream's
      Hydra overrides such as ``+key=value``).
    - ``skip_load_from_dotenv``: do not read env.yaml at all.
    """

    dotenv_path: Optional[Path] = None
    initial_global_config_dict: Optional[ConfigLike] = None
    skip_load_from_cli: bool = False
    skip_load_from_dotenv: bool = False

    NO_MODEL_GLOBAL_CONFIG_DICT: ClassVar[Dict[str, str]] = {
        POLICY_BASE_URL_KEY_NAME: "",
        POLICY_API_KEY_KEY_NAME: "",
        POLICY_MODEL_NAME_KEY_NAME: "",
    }

    def __post_init__(self) -> None:
        if self.dotenv_path is not None and not isinstance(self.dotenv_path, Path):
            if not isinstance(self.dotenv_path, (str, PurePath)):
                raise TypeError(f"dotenv_path must be a path, got {type(self.dotenv_path).__name__}")
            self.dotenv_path = Path(self.dotenv_path)
        self.skip_load_from_cli = bool(self.skip_load_from_cli)
        self.skip_load_from_dotenv = bool(self.skip_load_from_dotenv)


def _is_omegaconf(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "omegaconf"


def to_plain(value: Any, where: str = "initial_global_config_dict") -> Any:
    """A dict / DictConfig tree as plain JSON-able Python values.

    An omegaconf container is converted with ``OmegaConf.to_container(resolve=False)``: ``${...}``
    interpolations stay as text and are resolved by ng-run against the merged config, where
    upstream resolves them. omegaconf is imported only when such an object is passed in.
    """
    if _is_omegaconf(value):
        from omegaconf import OmegaConf  # the caller already has omegaconf: it passed one in

        value = OmegaConf.to_container(value, resolve=False)
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value}, which JSON cannot carry")
        return value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Mapping):
        out: Dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: keys must be strings, got {k!r}")
            out[k] = to_plain(v, f"{where}.{k}")
        return out
    if isinstance(value, (list, tuple)) or (hasattr(value, "__iter__") and hasattr(value, "__len__") and not isinstance(value, (bytes, bytearray))):
        return [to_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where} is a {type(value).__name__}, which a config cannot hold (use str, int, float, bool, None, lists and dicts)")
