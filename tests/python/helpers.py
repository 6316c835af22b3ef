"""Shared pieces of the Python surface tests: the trainer's vLLM stand-in as a process, free
ports, the process table, and the trainers' contiguity walks as they are written."""
from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
STUBS = Path(__file__).resolve().parent / "stubs"
WEATHER_ROWS = ROOT / "resources_servers" / "simple_weather" / "data" / "example.jsonl"
TRAINING_MODEL = "responses_api_models/vllm_model/configs/vllm_model_for_training.yaml"
WEATHER = "resources_servers/simple_weather/configs/simple_weather.yaml"
AGENT = "simple_weather_simple_agent"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class StandIn:
    """packages/trainer-vllm/bin/trainer-vllm.js as a process; its events are collected as they come."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            ["node", str(ROOT / "packages/trainer-vllm/bin/trainer-vllm.js"), "--exit-on-stdin-close", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        first = self.proc.stdout.readline().decode().split()
        if not first or first[0] != "ready":
            raise RuntimeError(f"the stand-in did not start: {first}")
        self.url = first[1]
        self.events: "queue.Queue[Dict]" = queue.Queue()
        self.all_events: List[Dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in iter(self.proc.stdout.readline, b""):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            self.all_events.append(ev)
            self.events.put(ev)

    def requests(self) -> List[Dict]:
        return [e for e in self.all_events if e["event"] == "request"]

    def closed(self) -> List[Dict]:
        return [e for e in self.all_events if e["event"] == "closed"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except (OSError, ValueError):
                pass


def weather_rows(repeats: int = 1, agent: str = AGENT) -> List[Dict]:
    base = [json.loads(line) for line in WEATHER_ROWS.read_text().splitlines() if line.strip()]
    rows = []
    for r in range(repeats):
        for row in base:
            row = json.loads(json.dumps(row))
            row["agent_ref"] = {"name": agent}
            row["_rowidx"] = len(rows)
            rows.append(row)
    return rows


def _stat(pid: int) -> Optional[List[str]]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rfind(")") + 2 :].split()


def live_descendants(root_pid: int) -> List[int]:
    """Live (non-zombie) processes under root_pid."""
    kids: Dict[int, List[int]] = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        st = _stat(int(p))
        if st and st[0] != "Z":
            kids.setdefault(int(st[1]), []).append(int(p))
    out, todo = [], list(kids.get(root_pid, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def alive(pids) -> List[int]:
    out = []
    for pid in pids:
        st = _stat(pid)
        if st and st[0] != "Z":
            out.append(pid)
    return out


def process_group_members(pgid: int) -> List[int]:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            st = _stat(int(p))
            if st and st[0] != "Z" and int(st[3]) == pgid:
                out.append(int(p))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"


# NeMo-RL's walk (nemo_rl/environments/nemo_gym.py, _postprocess_nemo_gym_to_nemo_rl_result), the
# token part as it is written there (torch tensors left out).
def nemo_rl_contiguity_walk(nemo_gym_result: dict) -> list:
    nemo_rl_message_log = []
    seen_token_ids: List[int] = []
    for output_item_dict in nemo_gym_result["response"]["output"]:
        if not bool(output_item_dict.get("generation_token_ids")):
            continue

        assert (
            seen_token_ids
            == output_item_dict["prompt_token_ids"][: len(seen_token_ids)]
        ), f"""Non-contiguous messages found! This may be a tokenization issue where certain tokens are combined when messages are concatenated, or it may be due to part of the chat history being truncated (like if super long history is truncated or if reasoning is stripped out).
Seen token IDs: {seen_token_ids}
Output prompt token IDs: {output_item_dict["prompt_token_ids"]}
output prompt token ids till seen: {output_item_dict["prompt_token_ids"][: len(seen_token_ids)]}
"""

        prompt_token_ids = output_item_dict.pop("prompt_token_ids")
        generation_token_ids = output_item_dict.pop("generation_token_ids")
        generation_log_probs = output_item_dict.pop("generation_log_probs")
        new_prompt_token_ids = prompt_token_ids[len(seen_token_ids) :]
        nemo_rl_message_log.append({"role": "user", "content": "", "token_ids": new_prompt_token_ids})
        nemo_rl_message_log.append({"role": "assistant", "content": "", "token_ids": generation_token_ids, "generation_logprobs": generation_log_probs})
        seen_token_ids.extend(new_prompt_token_ids)
        seen_token_ids.extend(generation_token_ids)
    if not nemo_rl_message_log:
        raise ValueError("NeMo Gym returned a result with no generation data.")
    return nemo_rl_message_log


# VeRL's walk (recipe nemo_gym/agent_loop.py, _postprocess_nemo_gym_result), tensors as lists.
def verl_postprocess(nemo_gym_result: dict) -> dict:
    message_log = []
    seen_token_ids: List[int] = []
    for item in nemo_gym_result["response"]["output"]:
        if "generation_token_ids" not in item:
            continue
        prompt_ids = item["prompt_token_ids"]
        if seen_token_ids != prompt_ids[: len(seen_token_ids)]:
            raise ValueError(f"Non-contiguous token IDs (server_patch active?). seen={len(seen_token_ids)} prompt={len(prompt_ids)}")
        message_log.append({"role": "user", "content": "", "token_ids": prompt_ids[len(seen_token_ids) :]})
        message_log.append({"role": "assistant", "content": "", "token_ids": item["generation_token_ids"], "generation_logprobs": item["generation_log_probs"]})
        seen_token_ids.extend(message_log[-2]["token_ids"])
        seen_token_ids.extend(message_log[-1]["token_ids"])
    if not message_log:
        raise ValueError("nemo-gym returned a result with no generation data. The prompt may exceed vLLM's max_model_len.")
    return {"message_log": message_log, "input_message_log": message_log[:1], "full_result": nemo_gym_result}


def env_for_child() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(STUBS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("NEMO_GYM_ROOT", None)
    return env


def wait_until(pred, timeout_s: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


sys.path.insert(0, str(STUBS))
