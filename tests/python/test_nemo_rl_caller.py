"""Written like NeMo-RL's NemoGym actor (nemo_rl/environments/nemo_gym.py): its import block and
_spinup config unchanged, rollouts collected as they complete through simple_weather + vllm_model
(token ids on) against two trainer vLLM stand-ins, every result through NeMo-RL's contiguity walk."""
import asyncio
import os
import time
import unittest
from collections import Counter
from pathlib import Path

from helpers import TRAINING_MODEL, WEATHER, StandIn, alive, free_port, live_descendants, nemo_rl_contiguity_walk, process_group_members, weather_rows, cmdline

DEFAULT_GYM_PORT_RANGE_LOW = 5000
DEFAULT_GYM_PORT_RANGE_HIGH = 5999


def _typed_gym_failure(error):
    status = getattr(error, "status", None)
    if not isinstance(status, int):
        return None
    return RuntimeError(f"NeMo-Gym /run failed with HTTP {status}: {error}")


class NemoRlCaller(unittest.TestCase):
    def test_spinup_collect_contiguity_shutdown(self):
        standins = [StandIn("--reasoning-parser"), StandIn("--reasoning-parser")]
        try:
            self._run(standins)
        finally:
            for s in standins:
                s.stop()

    def _run(self, standins):
        cfg = {
            "model_name": "Qwen/Qwen3-8B",
            "base_urls": [s.url for s in standins],
            "initial_global_config_dict": {"config_paths": [TRAINING_MODEL, WEATHER], "effort_levels": ["low"]},
            "port_range_low": DEFAULT_GYM_PORT_RANGE_LOW,
            "port_range_high": DEFAULT_GYM_PORT_RANGE_HIGH,
        }
        node_ip = "127.0.0.1"
        head_server_port = free_port()
        __file__ = str(Path(os.getcwd()) / "nemo_rl/environments/nemo_gym.py")

        # --- NeMo-RL's _spinup, as written there (Ray parts left out) ---
        from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper
        from nemo_gym.rollout_collection import RolloutCollectionHelper
        from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig
        from omegaconf import DictConfig

        RELATIVE_PATH = "nemo_rl/environments/nemo_gym.py"
        assert __file__.endswith(RELATIVE_PATH)
        initial_global_config_dict = dict(cfg.get("initial_global_config_dict") or {})
        initial_global_config_dict.pop("effort_levels", None)
        initial_global_config_dict.pop("pad_dynamic_image_shapes", None)
        initial_global_config_dict["policy_model_name"] = cfg["model_name"]
        initial_global_config_dict["policy_api_key"] = "dummy_key"
        initial_global_config_dict["policy_base_url"] = cfg["base_urls"]
        initial_global_config_dict.setdefault("default_host", node_ip)
        initial_global_config_dict["port_range_low"] = cfg.get("port_range_low", DEFAULT_GYM_PORT_RANGE_LOW)
        initial_global_config_dict["port_range_high"] = cfg.get("port_range_high", DEFAULT_GYM_PORT_RANGE_HIGH)
        initial_global_config_dict.setdefault("global_aiohttp_connector_limit_per_host", 16_384)
        initial_global_config_dict.setdefault("global_aiohttp_connector_limit", 65_536)
        initial_global_config_dict["ray_head_node_address"] = "127.0.0.1:6379"
        initial_global_config_dict[HEAD_SERVER_KEY_NAME] = {"host": "0.0.0.0", "port": head_server_port}
        rh = RunHelper()
        rh.start(
            global_config_dict_parser_config=GlobalConfigDictParserConfig(
                dotenv_path=Path(__file__.removesuffix(RELATIVE_PATH)).absolute() / "nemo_gym_env.yaml",
                initial_global_config_dict=DictConfig(initial_global_config_dict),
                skip_load_from_cli=True,
            )
        )
        head_server_config = BaseServerConfig(host=node_ip, port=head_server_port)
        rch = RolloutCollectionHelper()
        # --- end of _spinup ---

        from omegaconf import OmegaConf

        self.assertGreaterEqual(OmegaConf.calls, 1, "the DictConfig went through OmegaConf.to_container")
        try:
            rh.poll()  # health_check
            ng_run_pid = rh._process.pid
            stack = live_descendants(ng_run_pid)
            self.assertGreaterEqual(len(stack), 3, [cmdline(p) for p in stack])
            for inst in rh._server_instance_display_configs:
                self.assertTrue(DEFAULT_GYM_PORT_RANGE_LOW <= inst.port <= DEFAULT_GYM_PORT_RANGE_HIGH, f"{inst.process_name} on {inst.port}, outside port_range")

            examples = weather_rows(repeats=8)  # 40 rows
            counts_left = Counter(row["agent_ref"]["name"] for row in examples)

            async def run_rollouts():
                out = []
                for task in rch.run_examples(examples=examples, head_server_config=head_server_config):
                    try:
                        nemo_gym_row, nemo_gym_result = await task
                    except Exception as error:
                        typed = _typed_gym_failure(error)
                        raise (typed or error)
                    counts_left[nemo_gym_row["agent_ref"]["name"]] -= 1
                    out.append((nemo_gym_row["_rowidx"], nemo_gym_row, nemo_gym_result))
                return out

            t0 = time.monotonic()
            results = asyncio.run(run_rollouts())
            took = time.monotonic() - t0
            self.assertEqual(len(results), len(examples))
            self.assertEqual(sorted(r[0] for r in results), list(range(len(examples))))
            turns = 0
            for _, row, result in results:
                self.assertEqual(result["reward"], 1.0)
                log = nemo_rl_contiguity_walk(result)
                turns += len(log) // 2
            self.assertGreaterEqual(turns, 2 * len(examples))
            used = [len(s.requests()) for s in standins]
            self.assertTrue(all(n > 0 for n in used), f"both stand-ins get generations: {used}")
            print(f"nemo-rl caller: {len(results)} rollouts, {turns} turns, all contiguous, {took:.2f} s; generations per stand-in {used}")
            rh.poll()
        finally:
            # NemoGym.shutdown
            run_helper = rh
            rh = None
            run_helper.shutdown()
            run_helper.shutdown()  # idempotent
        left = alive(stack + [ng_run_pid])
        self.assertEqual(left, [], [cmdline(p) for p in left])
        self.assertEqual(process_group_members(ng_run_pid), [])
        standin_pids = {s.proc.pid for s in self.__dict__.get("_standins", [])}
        mine = [p for p in live_descendants(os.getpid()) if "trainer-vllm" not in cmdline(p) and p not in standin_pids]
        self.assertEqual(mine, [], [cmdline(p) for p in mine])


if __name__ == "__main__":
    unittest.main()
