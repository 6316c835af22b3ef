"""Written like VeRL's NeMo Gym recipe (verl-recipe nemo_gym/agent_loop.py): the Gym root found from
the installed package, `$NEMO_GYM_ROOT/...` config paths from its YAML, the vllm_model keys, uv
keys and list of base URLs it sets, and rollouts awaited on a loop running in a thread, every
result through the recipe's own contiguity check (a non-contiguous one would become an empty
sample with reward 0: none may)."""
import asyncio
import copy
import importlib.util as _ilu
import os
import socket
import threading
import unittest
from pathlib import Path

from helpers import ROOT, StandIn, alive, cmdline, live_descendants, nemo_rl_contiguity_walk, verl_postprocess, weather_rows

YAML_CONFIG_PATHS = [
    "$NEMO_GYM_ROOT/responses_api_models/vllm_model/configs/vllm_model_for_training.yaml",
    "$NEMO_GYM_ROOT/resources_servers/simple_weather/configs/simple_weather.yaml",
]


class VerlCaller(unittest.TestCase):
    def test_recipe_init_and_generate(self):
        os.environ.pop("NEMO_GYM_ROOT", None)
        standins = [StandIn(), StandIn()]  # vLLM without a reasoning parser: uses_reasoning_parser false
        try:
            self._run(standins)
        finally:
            for s in standins:
                s.stop()

    def _run(self, standins):
        # --- the recipe's module prologue: the Gym root from the installed package ---
        _nemo_gym_path = os.environ.get("NEMO_GYM_ROOT")
        if not _nemo_gym_path:
            _spec = _ilu.find_spec("nemo_gym")
            if _spec and _spec.origin:
                _nemo_gym_path = str(Path(_spec.origin).parent.parent)
        self.assertEqual(Path(_nemo_gym_path).resolve(), ROOT)

        # --- _init_nemo_gym, as written there (Ray and the tokenizer left out) ---
        nemo_gym_cfg = {"nemo_gym_root": "$NEMO_GYM_ROOT", "uses_reasoning_parser": False, "config_paths": YAML_CONFIG_PATHS}
        _raw = nemo_gym_cfg.get("nemo_gym_root") or ""
        nemo_gym_root = _raw if (_raw and not _raw.startswith("$")) else os.environ.get("NEMO_GYM_ROOT")
        from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper
        from nemo_gym.rollout_collection import RolloutCollectionHelper
        from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig
        from omegaconf import DictConfig

        if not nemo_gym_root:
            spec = _ilu.find_spec("nemo_gym")
            if spec and spec.origin:
                nemo_gym_root = str(Path(spec.origin).parent.parent)
        config_paths = [p.replace("$NEMO_GYM_ROOT", str(nemo_gym_root)) if nemo_gym_root else p for p in (nemo_gym_cfg.get("config_paths") or [])]
        initial_global_cfg = {"config_paths": config_paths} if config_paths else {}
        uses_reasoning_parser = nemo_gym_cfg.get("uses_reasoning_parser", False)
        vllm_model_cfg = initial_global_cfg.setdefault("policy_model", {}).setdefault("responses_api_models", {}).setdefault("vllm_model", {})
        vllm_model_cfg["uses_reasoning_parser"] = uses_reasoning_parser
        if not uses_reasoning_parser:
            vllm_model_cfg.setdefault("extra_body", {}).setdefault("chat_template_kwargs", {})["enable_thinking"] = False
        server_addresses = [s.url[: -len("/v1")].split("://", 1)[1] for s in standins]
        base_urls = [(addr if addr.startswith("http") else f"http://{addr}").rstrip("/") + "/v1" for addr in server_addresses]
        initial_global_cfg["policy_model_name"] = "Qwen/Qwen3-8B"
        initial_global_cfg["policy_api_key"] = "dummy_key"
        initial_global_cfg["policy_base_url"] = base_urls
        initial_global_cfg.setdefault("global_aiohttp_connector_limit_per_host", 16_384)
        initial_global_cfg.setdefault("global_aiohttp_connector_limit", 65_536)
        initial_global_cfg["ray_head_node_address"] = "127.0.0.1:6379"
        if nemo_gym_root:
            initial_global_cfg.setdefault("uv_venv_dir", str(nemo_gym_root))
            initial_global_cfg.setdefault("skip_venv_if_present", True)
        node_ip = "127.0.0.1"
        with socket.socket() as s:
            s.bind(("", 0))
            head_port = s.getsockname()[1]
        initial_global_cfg[HEAD_SERVER_KEY_NAME] = {"host": "0.0.0.0", "port": head_port}
        _head_server_config = BaseServerConfig(host=node_ip, port=head_port)
        _rh = RunHelper()
        _rh.start(global_config_dict_parser_config=GlobalConfigDictParserConfig(dotenv_path=None, initial_global_config_dict=DictConfig(initial_global_cfg), skip_load_from_cli=True))
        _rch = RolloutCollectionHelper()
        _rollout_loop = asyncio.new_event_loop()
        _rollout_thread = threading.Thread(target=_rollout_loop.run_forever, daemon=True, name="nemo-gym-rollout-loop")
        _rollout_thread.start()
        # --- end of _init_nemo_gym ---
        stack = live_descendants(_rh._process.pid) + [_rh._process.pid]
        try:
            nemo_gym_examples = weather_rows(repeats=4)

            async def _async_generate_sequences():
                nemo_gym_result_iterator = _rch.run_examples(examples=nemo_gym_examples, head_server_config=_head_server_config)
                rowidxs, raw_results, empty = [], [], 0
                for task in nemo_gym_result_iterator:
                    nemo_gym_row, nemo_gym_result = await task
                    nemo_rl_contiguity_walk(copy.deepcopy(nemo_gym_result))  # and NeMo-RL's walk on every result
                    try:
                        result = verl_postprocess(nemo_gym_result)
                    except ValueError:
                        empty += 1  # the recipe's _empty_result: reward 0
                        result = {"full_result": {"reward": 0.0}}
                    result["env"] = nemo_gym_row["agent_ref"]["name"]
                    rowidxs.append(nemo_gym_row["_rowidx"])
                    raw_results.append(result)
                results = [None] * len(nemo_gym_examples)
                for rowidx, result in zip(rowidxs, raw_results, strict=True):
                    results[rowidx] = result
                return results, empty

            results, empty = asyncio.run_coroutine_threadsafe(_async_generate_sequences(), _rollout_loop).result(120)
            self.assertEqual(empty, 0, "every rollout contiguous: none becomes an empty sample")
            self.assertTrue(all(r is not None for r in results))
            self.assertTrue(all(r["full_result"]["reward"] == 1.0 for r in results))
            # enable_thinking false reached the backend through extra_body.chat_template_kwargs.
            self.assertTrue(all(len(s.requests()) > 0 for s in standins))
            kwargs = [e.get("chat_template_kwargs") for s in standins for e in s.requests()]
            self.assertTrue(all(k == {"enable_thinking": False} for k in kwargs), kwargs[:3])
            print(f"verl caller: {len(results)} rollouts, all contiguous (the recipe's check and NeMo-RL's walk), generations per stand-in {[len(s.requests()) for s in standins]}")
        finally:
            _rollout_loop.call_soon_threadsafe(_rollout_loop.stop)
            _rh.shutdown()
        self.assertEqual(alive(stack), [], [cmdline(p) for p in alive(stack)])


if __name__ == "__main__":
    unittest.main()
