"""Failures reach the trainer as exceptions: dead backends make every row raise (with a status and
a reason, never a result) within 60 s; a bad config makes start() raise with ng-run's message;
nothing of the stack is left after shutdown()."""
import asyncio
import json
import os
import tempfile
import urllib.request
from pathlib import Path
import time
import unittest

from helpers import TRAINING_MODEL, WEATHER, StandIn, alive, cmdline, free_port, live_descendants, weather_rows

from nemo_gym.cli import GlobalConfigDictParserConfig, NeMoGymStartError, RunHelper
from nemo_gym.rollout_collection import RolloutCollectionHelper
from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig, RolloutError, RolloutTimeoutError


def start(initial):
    rh = RunHelper()
    rh.start(GlobalConfigDictParserConfig(initial_global_config_dict=initial, skip_load_from_cli=True, skip_load_from_dotenv=True))
    return rh


class Failures(unittest.TestCase):
    def test_dead_backends_every_row_raises(self):
        resets = [StandIn("--mode", "reset"), StandIn("--mode", "reset")]  # accept and close every connection
        try:
            self._dead([s.url for s in resets], "connections closed")
        finally:
            for s in resets:
                s.stop()
        self._dead([f"http://127.0.0.1:{free_port()}/v1", f"http://127.0.0.1:{free_port()}/v1"], "nothing listening")

    def _dead(self, base_urls, what):
        port = free_port()
        rh = start({
            "config_paths": [TRAINING_MODEL, WEATHER],
            "policy_base_url": base_urls,
            "policy_api_key": "dummy_key",
            "policy_model_name": "Qwen/Qwen3-8B",
            HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
        })
        stack = live_descendants(rh._process.pid) + [rh._process.pid]
        try:
            rows = weather_rows(repeats=4)

            async def collect():
                outcomes = []
                for task in RolloutCollectionHelper().run_examples(rows, BaseServerConfig(host="127.0.0.1", port=port)):
                    try:
                        outcomes.append(("result", await task))
                    except Exception as err:  # what a trainer sees
                        outcomes.append(("error", err))
                return outcomes

            t0 = time.monotonic()
            outcomes = asyncio.run(asyncio.wait_for(collect(), 60))
            took = time.monotonic() - t0
            self.assertLess(took, 60)
            self.assertEqual(len(outcomes), len(rows))
            kinds = [k for k, _ in outcomes]
            self.assertEqual(kinds, ["error"] * len(rows), [o for o in outcomes if o[0] == "result"][:1])
            reasons = set()
            for _, err in outcomes:
                self.assertIsInstance(err, RolloutError)
                self.assertIsInstance(err.status, int, err)
                self.assertGreaterEqual(err.status, 500)
                self.assertTrue(err.response_content)
                reasons.add((err.status, err.reason, err.code))
            print(f"dead backends ({what}): {len(rows)} rows raised in {took:.2f} s; (status, reason, code): {sorted(reasons, key=str)}")
            print(f"  first: {outcomes[0][1]}")
        finally:
            rh.shutdown()
        self.assertEqual(alive(stack), [], [cmdline(p) for p in alive(stack)])

    def test_hung_backend_times_out_and_stops(self):
        """A backend that never answers: the per-rollout timeout raises RolloutTimeoutError, and the
        closed connection reaches the backend (the generation stops)."""
        hung = StandIn("--mode", "hang", "--reasoning-parser")
        port = free_port()
        rh = start({
            "config_paths": [TRAINING_MODEL, WEATHER],
            "policy_base_url": [hung.url],
            "policy_api_key": "dummy_key",
            "policy_model_name": "Qwen/Qwen3-8B",
            HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
        })
        try:
            rows = weather_rows(repeats=2)

            async def collect():
                outcomes = []
                for task in RolloutCollectionHelper().run_examples(rows, BaseServerConfig(host="127.0.0.1", port=port), rollout_timeout_s=3):
                    try:
                        outcomes.append(await task)
                    except Exception as err:
                        outcomes.append(err)
                return outcomes

            t0 = time.monotonic()
            outcomes = asyncio.run(collect())
            took = time.monotonic() - t0
            self.assertTrue(all(isinstance(o, RolloutTimeoutError) and o.reason == "timeout" for o in outcomes), outcomes[:1])
            self.assertLess(took, 10)
            deadline = time.monotonic() + 3
            while len(hung.closed()) < len(rows) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(hung.closed()), len(rows), "every hung generation's connection was closed")
            print(f"hung backend: {len(rows)} rows raised RolloutTimeoutError after {took:.2f} s (rollout_timeout_s=3); all {len(hung.closed())} generations closed at the backend")
        finally:
            rh.shutdown()
            hung.stop()

    def test_bad_config_raises_with_the_message(self):
        port = free_port()
        with self.assertRaises(NeMoGymStartError) as caught:
            start({"config_paths": ["resources_servers/simple_weather/configs/no_such_file.yaml"], HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port}})
        text = str(caught.exception)
        self.assertIn("Config file not found", text)
        self.assertIn("no_such_file.yaml", text)
        # A server that refuses its config at start: the message names the key and the server.
        with self.assertRaises(NeMoGymStartError) as caught:
            start({
                "config_paths": [TRAINING_MODEL, WEATHER],
                "policy_base_url": "http://127.0.0.1:9/v1",
                "policy_api_key": "k",
                "policy_model_name": "m",
                "policy_model": {"responses_api_models": {"vllm_model": {"not_a_vllm_model_key": 1}}},
                HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
            })
        text = str(caught.exception)
        self.assertIn("not_a_vllm_model_key", text)
        self.assertIn("policy_model", text)
        print("bad config: " + " | ".join(text.splitlines()[:2])[:500])
        # The start-up deadline names the servers that did not come up.
        with self.assertRaises(NeMoGymStartError) as caught:
            start({
                "config_paths": [TRAINING_MODEL, WEATHER],
                "policy_base_url": "http://127.0.0.1:9/v1",
                "policy_api_key": "k",
                "policy_model_name": "m",
                "startup_timeout_s": 0.01,
                HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
            })
        text = str(caught.exception)
        self.assertIn("did not answer within 0.01 s", text)
        self.assertRegex(text, r"Server `(policy_model|simple_weather|simple_weather_simple_agent)`")
        print("start-up deadline: " + " | ".join(text.splitlines()[:2])[:300])
        mine = [p for p in live_descendants(os.getpid()) if "trainer-vllm" not in cmdline(p)]
        self.assertEqual(mine, [], [cmdline(p) for p in mine])

    def test_dotenv_then_poll_names_a_dead_server(self):
        port = free_port()
        with tempfile.TemporaryDirectory() as tmp:
            # env.yaml at dotenv_path gives what the initial dict does not; the initial dict wins where both give a key.
            dotenv = Path(tmp) / "nemo_gym_env.yaml"
            dotenv.write_text("policy_base_url: http://127.0.0.1:9/v1\npolicy_api_key: from-env-yaml\npolicy_model_name: from-env-yaml\n")
            rh = RunHelper()
            rh.start(GlobalConfigDictParserConfig(dotenv_path=dotenv, initial_global_config_dict={"config_paths": [TRAINING_MODEL, WEATHER], "policy_model_name": "from-initial", HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port}}, skip_load_from_cli=True))
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/global_config_dict_yaml", timeout=10) as res:
                merged = json.loads(res.read())
            self.assertIn("policy_model_name: from-initial", merged)
            self.assertIn("policy_base_url: http://127.0.0.1:9/v1", merged)
            rh.poll()
            weather = next(i for i in rh._server_instance_display_configs if i.process_name == "simple_weather")
            os.kill(weather.pid, 9)
            deadline = time.monotonic() + 15
            message = None
            while time.monotonic() < deadline and message is None:
                try:
                    rh.poll()
                    time.sleep(0.1)
                except RuntimeError as err:
                    message = str(err)
            self.assertIsNotNone(message, "poll() raised")
            self.assertIn("simple_weather", message)
            print(f"poll: {message.splitlines()[0]}")
        finally:
            rh.shutdown()


if __name__ == "__main__":
    unittest.main()
