"""4,096 rows at a semaphore of 512 all complete, through the full stack (simple_agent +
simple_weather + openai_model) against the benchmarks' stub model (a real HTTP server on
127.0.0.1 answering get_weather then a sentence), over reused keep-alive connections."""
import asyncio
import subprocess
import time
import unittest

from helpers import ROOT, alive, cmdline, free_port, live_descendants

from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper
from nemo_gym.rollout_collection import RolloutCollectionHelper
from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig

ROW = {
    "responses_create_params": {
        "input": [{"role": "developer", "content": "You are a weather assistant."}, {"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True, "description": ""}],
    },
    "agent_ref": {"name": "simple_weather_simple_agent"},
}


def start_stub():
    stub = subprocess.Popen(["node", str(ROOT / "packages/bench/dist/src/stub-model.js"), "--delay-ms", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = stub.stdout.readline().decode().split()
    assert line and line[0] == "ready", line
    return stub, int(line[1])


class Scale(unittest.TestCase):
    def test_4096_rows_at_semaphore_512(self):
        stub, stub_port = start_stub()
        port = free_port()
        rh = RunHelper()
        rh.start(GlobalConfigDictParserConfig(initial_global_config_dict={
            "config_paths": ["resources_servers/simple_weather/configs/simple_weather.yaml", "responses_api_models/openai_model/configs/openai_model.yaml"],
            "policy_base_url": f"http://127.0.0.1:{stub_port}/v1", "policy_api_key": "stub-not-a-key", "policy_model_name": "stub",
            HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
        }, skip_load_from_cli=True, skip_load_from_dotenv=True))
        stack = [rh._process.pid] + live_descendants(rh._process.pid)
        try:
            rows = [dict(ROW, _rowidx=i) for i in range(4096)]

            async def collect():
                rch = RolloutCollectionHelper()
                sem = asyncio.Semaphore(512)
                peak = 0
                got = []
                for task in rch.run_examples(examples=rows, head_server_config=BaseServerConfig(host="127.0.0.1", port=port), semaphore=sem):
                    row, result = await task
                    got.append((row["_rowidx"], result["reward"]))
                    pool = next(iter(rch._clients.values()))._pools
                    peak = max(peak, sum(p.count for p in pool.values()))
                return got, peak

            t0 = time.monotonic()
            cpu0 = time.process_time()
            got, peak = asyncio.run(collect())
            took = time.monotonic() - t0
            cpu = time.process_time() - cpu0
            self.assertEqual(sorted(i for i, _ in got), list(range(4096)))
            self.assertTrue(all(r == 1.0 for _, r in got))
            self.assertLessEqual(peak, 512)
            print(f"4096 rows at semaphore 512: {took:.2f} s, {4096 / took:.0f} rollouts/s, client CPU {1000 * cpu / 4096:.3f} ms per rollout, at most {peak} connections")
        finally:
            rh.shutdown()
            stub.stdin.close()
            stub.wait(5)
            stub.stdout.close()
        self.assertEqual(alive(stack), [], [cmdline(p) for p in alive(stack)])


if __name__ == "__main__":
    unittest.main()
