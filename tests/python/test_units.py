"""The package's parts without the stack: config conversion, error pickling, and the HTTP client
against a plain HTTP/1.1 server (keep-alive reuse, chunked answers, error answers, timeouts that
close the connection, an unknown agent, awaitables created outside a running loop)."""
import asyncio
import json
import pickle
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from nemo_gym.config_types import BaseServerConfig
from nemo_gym.global_config import GlobalConfigDictParserConfig, to_plain
from nemo_gym.rollout_collection import RolloutCollectionHelper
from nemo_gym.server_utils import RolloutError, RolloutHTTPError, RolloutTimeoutError, UnknownServerError, failure_reason


from helpers import free_port

DEAD_PORT = free_port()


class Fake(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    connections = 0
    closed_early = []

    def setup(self):
        type(self).connections += 1
        super().setup()

    def log_message(self, *a):
        pass

    def _send(self, status, payload, chunked=False):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 7):
                part = body[i : i + 7]
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def do_GET(self):
        port = self.server.server_address[1]
        self._send(200, [
            {"name": "agent", "server_type": "responses_api_agents", "impl": "x", "url": f"http://127.0.0.1:{port}", "pid": 1, "state": "running"},
            {"name": "gone", "server_type": "responses_api_agents", "impl": "x", "url": f"http://127.0.0.1:{DEAD_PORT}", "pid": 2, "state": "running"},
        ])

    def do_POST(self):
        row = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        kind = row.get("kind")
        if kind == "slow":
            time.sleep(1.5)
            try:
                self._send(200, {"reward": 1.0})
            except OSError:
                pass
            return
        if kind == "err":
            return self._send(500, {"detail": "the verifier failed", "code": "NG_ERR_INTERNAL"})
        if kind == "masked":
            return self._send(200, {"reward": 1.0, "mask_sample": True, "failure_reason": "capture_incomplete", "instance_config": {"seed": 3}})
        if kind == "upstream_judge":
            return self._send(200, {"reward": 0.0, "_ng_failure_class": "judge_failed", "_ng_failure_judge_error": "TimeoutError: judge"})
        if kind == "judge":
            return self._send(502, {"detail": "the judge gave no verdict", "code": "NG_ERR_JUDGE_FAILED", "verify_request": {"response": {}}})
        self._send(200, {"reward": 1.0, "echo": row.get("i")}, chunked=kind == "chunked")


class Install(unittest.TestCase):
    def test_pip_install_editable_offline(self):
        """`pip install -e <repo>` with no index: the in-tree backend needs nothing from PyPI."""
        import subprocess
        import sys
        import tempfile

        from helpers import ROOT

        with tempfile.TemporaryDirectory() as tmp:
            made = subprocess.run([sys.executable, "-m", "venv", tmp], capture_output=True, text=True)
            if made.returncode != 0:
                self.skipTest(f"python3 -m venv is not available here: {made.stderr.strip()[:200]}")
            py = f"{tmp}/bin/python"
            inst = subprocess.run([py, "-m", "pip", "install", "--no-index", "-q", "-e", str(ROOT)], capture_output=True, text=True, cwd=tmp)
            self.assertEqual(inst.returncode, 0, inst.stdout + inst.stderr)
            probe = "import importlib.util as u, pathlib, nemo_gym.cli, nemo_gym.rollout_collection, nemo_gym.server_utils; print(pathlib.Path(u.find_spec('nemo_gym').origin).parent.parent)"
            out = subprocess.run([py, "-c", probe], capture_output=True, text=True, cwd=tmp, env={"PATH": "/usr/bin:/bin"})
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.strip(), str(ROOT))
            print(f"editable install (pip install -e, offline): the Gym root found from the installed package is {out.stdout.strip()}")


class Units(unittest.TestCase):
    def test_failure_reason_reads_the_code_before_the_status(self):
        # The codes agents pass on from behind them decide; the status only where no code says more.
        self.assertEqual(failure_reason(502, "NG_ERR_MODEL_UNREACHABLE"), "model_unreachable")
        self.assertEqual(failure_reason(500, "NG_ERR_MODEL_TIMEOUT"), "timeout")
        self.assertEqual(failure_reason(502, "NG_ERR_VERIFY_FAILED"), "verify_error")
        self.assertEqual(failure_reason(422, "NG_ERR_VERIFY_FAILED"), "verify_error")
        self.assertEqual(failure_reason(502, None), "upstream_error")
        self.assertEqual(failure_reason(500, "NG_ERR_SOMETHING_ELSE"), "http_5xx")
        self.assertEqual(failure_reason(502, "NG_ERR_JUDGE_FAILED"), "judge_failed")

    def test_masked_sample_and_judge_failure_reach_the_trainer(self):
        # A masked sample comes back as a result with the flag where NeMo-RL reads it
        # (instance_config.mask_sample, nemo_rl/experience/rollouts.py); a judge failure is an exception.
        async def run():
            out = []
            for task in RolloutCollectionHelper().run_examples([{"agent_ref": {"name": "agent"}, "kind": k} for k in ("masked", "judge", "plain", "upstream_judge")], self.head):
                try:
                    out.append(await task)
                except Exception as err:
                    out.append(err)
            return out

        out = asyncio.run(run())
        results = {row["kind"]: res for row, res in (o for o in out if not isinstance(o, Exception))}
        self.assertEqual(results["masked"]["mask_sample"], True)
        self.assertEqual(results["masked"]["failure_reason"], "capture_incomplete")
        self.assertEqual(results["masked"]["instance_config"], {"seed": 3, "mask_sample": True})
        self.assertNotIn("instance_config", results["plain"])
        errors = [o for o in out if isinstance(o, Exception)]
        self.assertEqual(len(errors), 2)
        http = [e for e in errors if isinstance(e, RolloutHTTPError)]
        self.assertEqual([(e.reason, e.code, e.status) for e in http], [("judge_failed", "NG_ERR_JUDGE_FAILED", 502)])
        # Upstream's failed row (200, reward 0.0, _ng_failure_class) raises too: never a reward.
        row_failure = [e for e in errors if not isinstance(e, RolloutHTTPError)]
        self.assertEqual([(e.reason, e.code) for e in row_failure], [("judge_failed", "NG_ERR_JUDGE_FAILED")])

    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.head = BaseServerConfig(host="127.0.0.1", port=cls.server.server_address[1])

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def test_config_types(self):
        self.assertEqual(BaseServerConfig(host="h", port="8000").port, 8000)
        with self.assertRaises(ValueError):
            BaseServerConfig(host="h", port=70000)
        self.assertEqual(pickle.loads(pickle.dumps(BaseServerConfig(host="h", port=1))), BaseServerConfig(host="h", port=1))
        from omegaconf import DictConfig  # the test stand-in

        self.assertEqual(to_plain(DictConfig({"a": {"b": [1, "${x}"]}})), {"a": {"b": [1, "${x}"]}})
        cfg = GlobalConfigDictParserConfig(dotenv_path="/nowhere/env.yaml")
        self.assertEqual(str(cfg.dotenv_path), "/nowhere/env.yaml")
        self.assertFalse(cfg.skip_load_from_cli)

    def test_root_and_node_errors_say_what_to_do(self):
        import os
        from unittest import mock

        from nemo_gym.cli import NeMoGymStartError, RunHelper

        with mock.patch.dict(os.environ, {"NEMO_GYM_ROOT": "/tmp"}):
            with self.assertRaises(NeMoGymStartError) as caught:
                RunHelper().start(GlobalConfigDictParserConfig(skip_load_from_cli=True))
            self.assertIn("NEMO_GYM_ROOT=/tmp is not a NeMo Gym (TypeScript) checkout", str(caught.exception))
        with mock.patch.dict(os.environ, {"NEMO_GYM_NODE": "/nonexistent/node"}):
            with self.assertRaises(NeMoGymStartError) as caught:
                RunHelper().start(GlobalConfigDictParserConfig(skip_load_from_cli=True))
            self.assertIn("NEMO_GYM_NODE=/nonexistent/node is not an executable file", str(caught.exception))

    def test_errors_pickle_with_their_fields(self):
        err = RolloutHTTPError("boom", status=502, reason="upstream_error", code="NG_ERR_X", detail="d", url="u", agent_name="a", response_content=b"{}")
        back = pickle.loads(pickle.dumps(err))
        self.assertIsInstance(back, RolloutHTTPError)
        self.assertEqual((back.status, back.reason, back.code, back.response_content, str(back)), (502, "upstream_error", "NG_ERR_X", b"{}", "boom"))

    def test_reuse_chunked_errors_timeout_unknown(self):
        rch = RolloutCollectionHelper()
        before = Fake.connections

        async def run(rows, **kw):
            out = []
            for task in rch.run_examples(rows, self.head, **kw):
                try:
                    out.append(await task)
                except Exception as err:
                    out.append(err)
            return out

        async def scenario():
            rows = [{"agent_ref": {"name": "agent"}, "i": i, "kind": "chunked" if i % 2 else "plain"} for i in range(200)]
            first = await run(rows, semaphore=8)
            second = await run(rows, semaphore=asyncio.Semaphore(8))
            return first, second

        first, second = asyncio.run(scenario())
        for out in (first, second):
            self.assertEqual(sorted(res["echo"] for _, res in out), list(range(200)))
        # Each asyncio.run is a new loop (new pool); 8 in flight -> at most 8 connections per run.
        self.assertLessEqual(Fake.connections - before, 16, "connections are reused")

        async def failures():
            rows = [{"agent_ref": {"name": "agent"}, "kind": "err"}, {"agent_ref": {"name": "nobody"}}, {"agent_ref": {"name": "agent"}, "kind": "slow"}, {"agent_ref": {"name": "gone"}}]
            return await run(rows, rollout_timeout_s=0.5)

        t0 = time.monotonic()
        outs = asyncio.run(failures())
        self.assertLess(time.monotonic() - t0, 1.4, "the timeout did not wait for the slow answer")
        by_type = {type(o).__name__: o for o in outs}
        http = by_type["RolloutHTTPError"]
        self.assertEqual((http.status, http.code, http.reason), (500, "NG_ERR_INTERNAL", "http_5xx"))
        self.assertIn("the verifier failed", str(http))
        self.assertIn(b"NG_ERR_INTERNAL", http.response_content)
        self.assertFalse(hasattr(by_type["RolloutTimeoutError"], "response_content"), "no answer, no response_content (as upstream)")
        self.assertIsInstance(by_type["UnknownServerError"], UnknownServerError)
        self.assertIn("nobody", str(by_type["UnknownServerError"]))
        self.assertIsInstance(by_type["RolloutTimeoutError"], RolloutTimeoutError)
        gone = by_type["RolloutConnectionError"]
        self.assertEqual((gone.status, gone.reason), (None, "agent_unreachable"))
        self.assertIn("could not be reached", str(gone))
        self.assertTrue(all(isinstance(o, RolloutError) for o in outs))

    def test_created_outside_a_loop(self):
        it = RolloutCollectionHelper().run_examples([{"agent_ref": {"name": "agent"}, "i": 7}], self.head)

        async def consume():
            return [await t for t in it]

        [(row, result)] = asyncio.run(consume())
        self.assertEqual(result["echo"], 7)
        self.assertEqual(row["i"], 7)


if __name__ == "__main__":
    unittest.main()
