"""`pnpm bench +sections=[O]`: rollouts/s and client CPU per rollout of the Python package's
run_examples beside ng-collect-rollouts, on the same stack (simple_agent + simple_weather +
openai_model started by RunHelper) and the same stub model, in one run, rounds taken in turn.

    python3 packages/bench/python/bench-python-surface.py --rollouts 5000 --concurrency 512 --rounds 2
"""
import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NEMO_GYM_QUIET", "1")

from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper  # noqa: E402
from nemo_gym.rollout_collection import RolloutCollectionHelper  # noqa: E402
from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig  # noqa: E402

ROW = {
    "responses_create_params": {
        "input": [{"role": "developer", "content": "You are a weather assistant."}, {"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True, "description": ""}],
    },
}
AGENT = "simple_weather_simple_agent"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_examples_round(rch, head, n, c):
    rows = [dict(ROW, agent_ref={"name": AGENT}) for _ in range(n)]

    async def go():
        errors = 0
        for task in rch.run_examples(examples=rows, head_server_config=head, semaphore=asyncio.Semaphore(c)):
            try:
                _, result = await task
                if result.get("reward") != 1.0:
                    errors += 1
            except Exception:
                errors += 1
        return errors

    cpu0, t0 = time.process_time(), time.monotonic()
    errors = asyncio.run(go())
    return n / (time.monotonic() - t0), 1000 * (time.process_time() - cpu0) / n, errors


def collector_round(head_port, n, c, workdir):
    inp = Path(workdir) / "input.jsonl"
    if not inp.exists():
        inp.write_text((json.dumps(ROW) + "\n") * n)
    out = Path(workdir) / f"out-{time.monotonic_ns()}.jsonl"
    argv = [
        "node", str(ROOT / "packages/cli/bin/ng-collect-rollouts.js"), f"+head_server.port={head_port}", f"+agent_name={AGENT}",
        f"+input_jsonl_fpath={inp}", f"+output_jsonl_fpath={out}", f"+num_samples_in_parallel={c}",
    ]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(ROOT))
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    written = sum(1 for _ in out.open()) if out.exists() else 0
    return n / wall, 1000 * (usage.ru_utime + usage.ru_stime) / n, n - written


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollouts", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    n, c = args.rollouts, args.concurrency

    stub = subprocess.Popen(["node", str(ROOT / "packages/bench/dist/src/stub-model.js"), "--delay-ms", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stub_port = int(stub.stdout.readline().decode().split()[1])
    head_port = free_port()
    rh = RunHelper()
    rh.start(GlobalConfigDictParserConfig(initial_global_config_dict={
        "config_paths": ["resources_servers/simple_weather/configs/simple_weather.yaml", "responses_api_models/openai_model/configs/openai_model.yaml"],
        "policy_base_url": f"http://127.0.0.1:{stub_port}/v1", "policy_api_key": "bench-not-a-key", "policy_model_name": "stub",
        "http_pipelining": 1, "http_connections_per_host": 1024,
        "policy_model": {"responses_api_models": {"openai_model": {"max_connections_per_host": 1024}}},
        HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": head_port},
    }, skip_load_from_cli=True, skip_load_from_dotenv=True))
    head = BaseServerConfig(host="127.0.0.1", port=head_port)
    rch = RolloutCollectionHelper()
    try:
        with tempfile.TemporaryDirectory(prefix="ng-bench-py-") as workdir:
            run_examples_round(rch, head, min(n, 1000), min(c, 64))  # warm-up (JIT of the servers)
            py, col = [], []
            for _ in range(args.rounds):
                col.append(collector_round(head_port, n, c, workdir))
                py.append(run_examples_round(rch, head, n, c))
    finally:
        rh.shutdown(quiet=True)
        stub.stdin.close()
        stub.wait(5)

    def med(rows, i):
        return statistics.median(r[i] for r in rows)

    print(f"{'client':<36} {'rollout/s':>9} {'client CPU ms/r':>16} {'errors':>7}")
    print(f"{'ng-collect-rollouts (Node)':<36} {med(col, 0):>9.0f} {med(col, 1):>16.3f} {sum(r[2] for r in col):>7}")
    print(f"{'run_examples (Python, asyncio)':<36} {med(py, 0):>9.0f} {med(py, 1):>16.3f} {sum(r[2] for r in py):>7}")
    print(f"rate ratio run_examples / ng-collect-rollouts: {med(py, 0) / med(col, 0):.2f}  (medians of {args.rounds} rounds each, taken in turn; {n} rollouts per round at {c} in flight)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
