"""Cancelling half of 64 in-flight rollouts (async GRPO drops stale rollouts after a weight update):
the trainer's vLLM stand-in sees those generations' connections closed within 2 s, no result
arrives for them, the other half completes, and a later run_examples on the same stack works."""
import asyncio
import time
import unittest

from helpers import TRAINING_MODEL, WEATHER, StandIn, free_port, weather_rows

from nemo_gym.cli import GlobalConfigDictParserConfig, RunHelper
from nemo_gym.rollout_collection import RolloutCollectionHelper
from nemo_gym.server_utils import HEAD_SERVER_KEY_NAME, BaseServerConfig

DELAY_MS = 2500


def tagged_rows(n, tag):
    rows = weather_rows(repeats=(n + 4) // 5)[:n]
    for i, row in enumerate(rows):
        row["_rowidx"] = i
        for m in row["responses_create_params"]["input"]:
            if m["role"] == "user":
                m["content"] = f"[{tag} {i}] {m['content']}"
    return rows


def tag_of(user_text):
    return user_text.split("]", 1)[0] + "]"


class Cancellation(unittest.TestCase):
    def test_cancel_half_of_64(self):
        standin = StandIn("--reasoning-parser", "--mode", "slow", "--delay-ms", str(DELAY_MS))
        port = free_port()
        rh = RunHelper()
        try:
            rh.start(GlobalConfigDictParserConfig(initial_global_config_dict={
                "config_paths": [TRAINING_MODEL, WEATHER], "policy_base_url": [standin.url], "policy_api_key": "dummy_key",
                "policy_model_name": "Qwen/Qwen3-8B", HEAD_SERVER_KEY_NAME: {"host": "127.0.0.1", "port": port},
            }, skip_load_from_cli=True, skip_load_from_dotenv=True))
            head = BaseServerConfig(host="127.0.0.1", port=port)
            rch = RolloutCollectionHelper()
            asyncio.run(self._scenario(rch, head, standin))
        finally:
            rh.shutdown()
            standin.stop()

    async def _scenario(self, rch, head, standin):
        rows = tagged_rows(64, "a")
        it = rch.run_examples(examples=rows, head_server_config=head)
        slots = list(it)

        async def consume(slot):
            return await slot

        consumers = [asyncio.ensure_future(consume(s)) for s in slots]
        deadline = time.monotonic() + 20
        while len([e for e in standin.requests() if e["user"].startswith("[a ")]) < 64:
            self.assertLess(time.monotonic(), deadline, f"64 generations in flight: {len(standin.requests())}")
            await asyncio.sleep(0.02)
        cancelled_at = time.time() * 1000
        for c in consumers[32:]:
            c.cancel()
        done = await asyncio.gather(*consumers[:32])
        await asyncio.sleep(0.05)
        victims = [rows[i] for i, t in enumerate(it.tasks) if t.cancelled()]
        self.assertEqual(len(victims), 32, "one rollout cancelled per cancelled awaitable")
        victim_tags = {tag_of(r["responses_create_params"]["input"][1]["content"]) for r in victims}
        got_tags = {tag_of(row["responses_create_params"]["input"][1]["content"]) for row, _ in done}
        self.assertEqual(len(done), 32)
        self.assertTrue(all(result["reward"] == 1.0 for _, result in done))
        self.assertEqual(got_tags & victim_tags, set(), "no result for a cancelled rollout")
        self.assertEqual(len(got_tags | victim_tags), 64)
        for c in consumers[32:]:
            self.assertTrue(c.cancelled())

        closed = {tag_of(e["user"]): e["t"] for e in standin.closed() if e["user"].startswith("[a ")}
        missing = victim_tags - set(closed)
        self.assertEqual(missing, set(), "the stand-in saw every cancelled generation's connection closed")
        late = {t: closed[t] - cancelled_at for t in victim_tags if closed[t] - cancelled_at > 2000}
        self.assertEqual(late, {}, "closed within 2 s")
        worst = max(closed[t] - cancelled_at for t in victim_tags)
        self.assertEqual(set(closed) - victim_tags, set(), "only cancelled generations were closed")
        after = [e for e in standin.requests() if tag_of(e["user"]) in victim_tags and e["t"] > cancelled_at + 50]
        self.assertEqual(after, [], "no generation started for a cancelled rollout afterwards")
        print(f"cancel 32 of 64 in flight: all 32 generations closed at the stand-in within {worst:.0f} ms, 32 results, 0 results for the cancelled")

        # A later run_examples on the same stack works; a row's own task cancels exactly that rollout.
        later = tagged_rows(8, "b")
        it2 = rch.run_examples(examples=later, head_server_config=head)
        while len([e for e in standin.requests() if e["user"].startswith("[b ")]) < 8:
            await asyncio.sleep(0.02)
        t_cancel = time.time() * 1000
        it2.tasks[3].cancel()
        outcomes = []
        for task in it2:
            try:
                outcomes.append(await task)
            except asyncio.CancelledError:
                outcomes.append("cancelled")
        self.assertEqual(outcomes.count("cancelled"), 1)
        self.assertEqual(sorted(row["_rowidx"] for row, _ in [o for o in outcomes if o != "cancelled"]), [0, 1, 2, 4, 5, 6, 7])
        closed_b = [e for e in standin.closed() if e["user"].startswith("[b 3]")]
        self.assertEqual(len(closed_b), 1)
        self.assertLess(closed_b[0]["t"] - t_cancel, 2000)
        print(f"later run_examples: 7 results, row 3 cancelled by its task, its generation closed in {closed_b[0]['t'] - t_cancel:.0f} ms")

        # NeMo-RL's abort path: Ray cancels run_rollouts while it awaits; the generator (and with it the
        # iterator) is dropped. The awaited rollout and every other one of the batch stop.
        third = tagged_rows(8, "c")

        async def run_rollouts():
            for task in rch.run_examples(examples=third, head_server_config=head):
                await task

        consumer = asyncio.ensure_future(run_rollouts())
        while len([e for e in standin.requests() if e["user"].startswith("[c ")]) < 8:
            await asyncio.sleep(0.02)
        t_abort = time.time() * 1000
        consumer.cancel()
        await asyncio.wait([consumer])
        del consumer
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and len([e for e in standin.closed() if e["user"].startswith("[c ")]) < 8:
            await asyncio.sleep(0.02)
        closed_c = [e for e in standin.closed() if e["user"].startswith("[c ")]
        self.assertEqual(len(closed_c), 8, "the whole batch stopped when its consumer was cancelled")
        worst_c = max(e["t"] for e in closed_c) - t_abort
        self.assertLess(worst_c, 2000)
        print(f"consumer cancelled (NeMo-RL's abort path): all 8 generations of the batch closed within {worst_c:.0f} ms")


if __name__ == "__main__":
    unittest.main()
