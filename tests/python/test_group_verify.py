"""Group rewards through run_examples: the rows of one task (8 repeats) are scored together by
group_judge's /verify_group; the rewards do not depend on the order of the rows; a failed member is
left out (score_rest) or fails its group (fail_group), raising a RolloutError, never a result."""
import asyncio
import json
import random
import re
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import ROOT, free_port

from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper
from nemo_gym.rollout_collection import RolloutCollectionHelper
from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig, RolloutError

GROUP_JUDGE = "resources_servers/group_judge/configs/group_judge.yaml"
MODEL = "responses_api_models/openai_model/configs/openai_model.yaml"
AGENT = "group_judge_simple_agent"
TASKS = [json.loads(line) for line in (ROOT / "resources_servers/group_judge/data/example.jsonl").read_text().splitlines() if line.strip()]


def text_response(text):
    return {"id": "resp_stub", "created_at": 0, "model": "stub", "object": "response", "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "output": [{"id": "msg_stub", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}]}


COUNTER = [0]
COUNTER_LOCK = threading.Lock()


class Backend(BaseHTTPRequestHandler):
    """Policy and judge in one: the policy answers `q=<x> fail?` where the row's user text says its quality; the judge scores by q."""

    def log_message(self, *a):
        pass

    def do_GET(self):
        self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        last = body["input"][-1]["content"]
        if "<trajectory id=" in last:
            scores = [{"trajectory_id": i, "explanation": "stub", "score": float(re.search(r"q=([\d.]+)", t).group(1))}
                      for i, t in re.findall(r'<trajectory id="(\d+)">\n([\s\S]*?)\n</trajectory>', last)]
            return self._send(200, text_response(json.dumps({"scores": scores})))
        q = re.search(r"\[q=([\d.]+)\]", last)
        if "[fail]" in last:
            return self._send(500, {"error": {"message": "scheduled failure"}})
        if q is None:
            with COUNTER_LOCK:
                COUNTER[0] += 1
                return self._send(200, text_response(f"q={(COUNTER[0] % 8) / 8} answer"))
        return self._send(200, text_response(f"q={q.group(1)} answer"))

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def rows_for(task_index, qualities, fail=()):
    """Rows of one task tagged with their task and repeat index; each row's user text names the quality the policy answers with."""
    base = TASKS[task_index]
    out = []
    for r, q in enumerate(qualities):
        row = json.loads(json.dumps(base))
        row["responses_create_params"]["input"][0]["content"] += f" [q={q}]" + (" [fail]" if r in fail else "")
        row["_ng_task_index"] = task_index
        row["_ng_rollout_index"] = r
        out.append(row)
    return out


def answer_q(result):
    return float(re.search(r"q=([\d.]+)", result["response"]["output"][-1]["content"][0]["text"]).group(1))


class GroupVerify(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.backend = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
        threading.Thread(target=cls.backend.serve_forever, daemon=True).start()
        cls.port = free_port()
        cls.rh = {}
        for policy in ("score_rest", "fail_group"):
            port = free_port()
            rh = RunHelper()
            rh.start(GlobalConfigDictParserConfig(initial_global_config_dict={
                "config_paths": [GROUP_JUDGE, MODEL],
                "policy_base_url": f"http://127.0.0.1:{cls.backend.server_address[1]}/v1",
                "policy_api_key": "dummy_key",
                "policy_model_name": "stub",
                "group_judge": {"resources_servers": {"group_judge": {"group_member_failure": policy}}},
                HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
            }, skip_load_from_cli=True, skip_load_from_dotenv=True))
            cls.rh[policy] = (rh, port)

    @classmethod
    def tearDownClass(cls):
        for rh, _ in cls.rh.values():
            rh.shutdown()
        cls.backend.shutdown()

    def collect(self, rows, policy="score_rest"):
        async def run():
            out = []
            for task in RolloutCollectionHelper().run_examples(rows, BaseServerConfig(host="127.0.0.1", port=self.rh[policy][1]), semaphore=4):
                try:
                    out.append(await task)
                except RolloutError as err:
                    out.append(err)
            return out
        return asyncio.run(asyncio.wait_for(run(), 60))

    def test_groups_of_eight_any_order(self):
        qualities = [0.1, 0.9, 0.4, 0.6, 0.75, 0.0, 1.0, 0.3]
        # Task 1's rows carry no task index: they are one group by their identical responses_create_params.
        untagged = [json.loads(json.dumps(TASKS[1])) for _ in range(8)]
        rows = rows_for(0, qualities) + untagged
        shuffled = list(rows)
        random.Random(7).shuffle(shuffled)
        by_content = []
        for batch in (rows, shuffled):
            got = self.collect(batch)
            self.assertEqual(len(got), 16)
            rewards = {}
            for row, result in got:
                self.assertEqual(result["reward"], answer_q(result))
                self.assertEqual(result["group_verify"]["members"], 8)
                self.assertIn("verify_reward", result)
                if "_ng_task_index" in row:
                    rewards[row["responses_create_params"]["input"][0]["content"]] = result["reward"]
            by_content.append(rewards)
        self.assertEqual(len(by_content[0]), 8)
        self.assertEqual(by_content[0], by_content[1])
        print(f"group verify: 2 groups of 8 scored, shuffled rows gave the same {len(by_content[0])} rewards")

    def test_failed_member_score_rest_and_fail_group(self):
        rows = rows_for(2, [0.5, 0.25, 1.0, 0.0], fail={1})
        rest = self.collect(rows, "score_rest")
        errors = [o for o in rest if isinstance(o, RolloutError)]
        self.assertEqual(len(errors), 1)
        scored = [o for o in rest if not isinstance(o, RolloutError)]
        self.assertEqual(sorted(r["reward"] for _, r in scored), [0.0, 0.5, 1.0])
        self.assertTrue(all(r["group_verify"]["members"] == 3 for _, r in scored))
        whole = self.collect(rows, "fail_group")
        self.assertTrue(all(isinstance(o, RolloutError) for o in whole), whole)
        self.assertEqual(sorted(o.reason for o in whole).count("group_failed"), 3)
        print(f"group verify failures: score_rest scored 3 of 4; fail_group raised {len(whole)} errors ({sorted(set(o.reason for o in whole))})")


if __name__ == "__main__":
    unittest.main()
