"""A minimal stand-in for omegaconf (PyPI is not reachable in CI): just enough DictConfig for the
tests to pass one to the nemo_gym package the way NeMo-RL and VeRL do. Not shipped."""
from collections.abc import Mapping


class DictConfig(Mapping):
    def __init__(self, content=None):
        self._content = {k: _wrap(v) for k, v in dict(content or {}).items()}

    def __getitem__(self, key):
        return self._content[key]

    def __iter__(self):
        return iter(self._content)

    def __len__(self):
        return len(self._content)

    def __getattr__(self, key):
        try:
            return self.__dict__["_content"][key]
        except KeyError:
            raise AttributeError(key) from None


class ListConfig(list):
    pass


def _wrap(v):
    if isinstance(v, dict):
        return DictConfig(v)
    if isinstance(v, list):
        return ListConfig(_wrap(x) for x in v)
    return v


def _unwrap(v):
    if isinstance(v, DictConfig):
        return {k: _unwrap(x) for k, x in v._content.items()}
    if isinstance(v, list):
        return [_unwrap(x) for x in v]
    return v


class OmegaConf:
    calls = 0

    @staticmethod
    def to_container(cfg, resolve=False):
        OmegaConf.calls += 1
        return _unwrap(cfg)

    @staticmethod
    def create(content):
        return DictConfig(content)
