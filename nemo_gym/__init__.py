"""NeMo Gym's Python import surface, for trainers that drive this (Node) stack online.

NeMo-RL and VeRL import ``nemo_gym.cli``, ``nemo_gym.rollout_collection`` and
``nemo_gym.server_utils``; this package gives them upstream's names with upstream's semantics,
using only the Python standard library. ``RunHelper`` starts ``ng-run`` (Node) as a child process;
``RolloutCollectionHelper.run_examples`` sends rows to the agents' ``/run`` over keep-alive HTTP.
"""
from os.path import abspath, dirname, join

from nemo_gym.package_info import __package_name__, __version__

# Upstream's layout constants: the package folder and the project root above it.
ROOT_DIR = dirname(abspath(__file__))
PARENT_DIR = abspath(join(ROOT_DIR, ".."))
CACHE_DIR = join(PARENT_DIR, "cache")
RESULTS_DIR = join(PARENT_DIR, "results")

__all__ = ["ROOT_DIR", "PARENT_DIR", "CACHE_DIR", "RESULTS_DIR", "__version__", "__package_name__"]
