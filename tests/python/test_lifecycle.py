"""The stack dies with the trainer: SIGKILL of the Python process that started it ends ng-run and
every server (they watch a pipe it held), and nothing is left in /proc."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import unittest

from helpers import TRAINING_MODEL, WEATHER, alive, cmdline, env_for_child, free_port, wait_until

CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper
    from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME
    sys.path.insert(0, sys.argv[1])
    from helpers import live_descendants
    rh = RunHelper()
    rh.start(global_config_dict_parser_config=GlobalConfigDictParserConfig(
        initial_global_config_dict={"config_paths": [sys.argv[2], sys.argv[3]], "policy_base_url": "http://127.0.0.1:9/v1",
                                    "policy_api_key": "k", "policy_model_name": "m", HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": int(sys.argv[4])}},
        skip_load_from_cli=True, skip_load_from_dotenv=True))
    pids = [rh._process.pid] + live_descendants(rh._process.pid)
    forked = os.fork()  # a fork of the trainer (multiprocessing's default on Linux) outlives it
    if forked == 0:
        time.sleep(600)
        os._exit(0)
    print("STACK " + json.dumps(pids), flush=True)
    print("FORK " + str(forked), flush=True)
    time.sleep(600)
    """
)


class Lifecycle(unittest.TestCase):
    def test_sigkill_of_the_parent_ends_the_stack(self):
        env = env_for_child()
        env["NEMO_GYM_QUIET"] = "1"
        here = os.path.dirname(os.path.abspath(__file__))
        child = subprocess.Popen([sys.executable, "-c", CHILD, here, TRAINING_MODEL, WEATHER, str(free_port())], stdout=subprocess.PIPE, env=env)
        pids = None
        forked = None
        try:
            deadline = time.monotonic() + 90
            forked = None
            for raw in iter(child.stdout.readline, b""):
                line = raw.decode()
                if line.startswith("STACK "):
                    pids = json.loads(line[6:])
                if line.startswith("FORK "):
                    forked = int(line[5:])
                    break
                if time.monotonic() > deadline:
                    break
            self.assertIsNotNone(pids, "the child started the stack")
            self.assertGreaterEqual(len(pids), 4, "ng-run and three servers")
            self.assertEqual(alive(pids), pids)
            t0 = time.monotonic()
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            gone = wait_until(lambda: not alive(pids), 20)
            took = time.monotonic() - t0
            self.assertTrue(gone, [cmdline(p) for p in alive(pids)])
            self.assertEqual(alive([forked]), [forked], "the trainer's fork is still running")
            print(f"SIGKILL of the parent: all {len(pids)} processes of the stack gone in {took:.2f} s (a fork of the parent still running)")
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()
            for pid in alive((pids or []) + ([forked] if forked else [])):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


if __name__ == "__main__":
    unittest.main()
