"""``RolloutCollectionHelper.run_examples``: rows to the agents' ``/run``, results as they complete.

    for task in RolloutCollectionHelper().run_examples(examples=rows, head_server_config=head):
        row, result = await task

Each row goes to the agent its ``row["agent_ref"]["name"]`` names, found in the head server's
instance table; the row is sent as it is (``agent_ref`` and task fields included), as upstream
sends it. The iterator yields awaitables in completion order (as ``asyncio.as_completed`` does);
each gives ``(row, result)`` or raises a :class:`~nemo_gym.server_utils.RolloutError` carrying
the HTTP status and the failure reason — an HTTP error, a dead backend or a timeout is never a
result with reward 0.

Cancellation (async GRPO drops stale rollouts after a weight update):

- cancelling a task that awaits one of the yielded awaitables cancels one rollout of the batch
  that has not finished — one still waiting for the semaphore if any, else the one started last —
  and no result arrives for it; the other awaitables still give the other results;
- ``iterator.tasks[i]`` is row i's own task: cancelling it cancels exactly that rollout (its
  awaitable then raises ``CancelledError``, as ``asyncio.as_completed`` does);
- ``iterator.cancel()`` cancels every rollout not yet finished; dropping the iterator and every
  awaitable it gave (a consumer that stopped iterating, e.g. after an exception) does the same.

A cancelled rollout's connection to the agent is closed, so the agent stops its tool calls and
model calls, and the model server closes its request to the backend: the generation stops.

Group rewards (docs/group-rewards.md): rows whose agent's resources server declares
``verify_group`` (the head server's ``GET /group_verifiers``) are scored together with the other
rows of their task in the batch (same ``_ng_task_index``, else the same ``responses_create_params``):
each such awaitable gives its result once the group is scored, with the group reward as ``reward``
(the rollout's own ``/verify`` reward kept as ``verify_reward``). A member that failed is left out
(``group_member_failure: score_rest``) or fails the group (``fail_group``); a group waits at most
``group_wait_timeout_s`` from its first finished member; a member not scored raises a RolloutError
with reason ``group_failed``, never a result.
"""
from __future__ import annotations

import asyncio
import json
import weakref
from collections import deque
from contextlib import nullcontext
from typing import Any, Deque, Dict, List, Optional, Set, Tuple, Union

from nemo_gym._http import HttpClient, TransportError
from nemo_gym.config_types import BaseServerConfig
from nemo_gym.server_utils import (
    RolloutConnectionError,
    RolloutError,
    RolloutHTTPError,
    RolloutTimeoutError,
    ServerClient,
    UnknownServerError,
    failure_reason,
)

#: Longest wait for one rollout's answer by default (a multi-turn rollout may take long).
DEFAULT_ROLLOUT_TIMEOUT_S = 3 * 3600.0
#: Connections per agent address by default (upstream's aiohttp limit_per_host default is 1024).
DEFAULT_CONNECTIONS_PER_HOST = 1024


def _raise_nofile_limit(wanted: int) -> None:
    """Let this process hold `wanted` sockets (soft limit up to the hard one), as Node does at start."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        target = wanted + 256
        if soft != resource.RLIM_INFINITY and soft < target:
            new = target if hard == resource.RLIM_INFINITY else min(hard, target)
            if new > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    except (ImportError, ValueError, OSError):
        pass



def flag_masked_sample(result):
    """A masked sample (``mask_sample: true``, with its ``failure_reason``) as trainers read it.

    The row keeps its top-level ``mask_sample``; NeMo-RL reads the flag from
    ``result["instance_config"]["mask_sample"]`` (nemo_rl/experience/rollouts.py,
    ``_extract_mask_sample_flags``) and zeroes the sample's loss, so the flag is set there too.
    """
    if isinstance(result, dict) and result.get("mask_sample") is True:
        instance_config = result.get("instance_config")
        if not isinstance(instance_config, dict):
            instance_config = {}
        result["instance_config"] = {**instance_config, "mask_sample": True}
    return result

class _Batch:
    """The rollouts of one run_examples call. Holds no reference to the iterator."""

    def __init__(self, helper: "RolloutCollectionHelper", examples: List[Dict], client: ServerClient, semaphore: Any, timeout_s: Optional[float]) -> None:
        self.helper = helper
        self.examples = examples
        self.client = client
        self.semaphore = semaphore
        self.timeout_s = timeout_s
        self.tasks: List[asyncio.Task] = []
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.started = False
        self.ready: Deque[asyncio.Task] = deque()
        self.waiters: Deque[asyncio.Future] = deque()
        self.claimed: Set[asyncio.Task] = set()
        #: Tasks that have passed the semaphore and sent their request, in order.
        self.running: List[asyncio.Task] = []
        #: The group of each row scored as a group, by row index.
        self.groups: Dict[int, "_Group"] = {}

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        loop = self.loop = asyncio.get_running_loop()
        http = self.helper._http_client(loop)
        self._form_groups(loop, http)
        for i, row in enumerate(self.examples):
            task = loop.create_task(self._run(i, row, http))
            task.add_done_callback(self._on_done)
            self.tasks.append(task)

    def _form_groups(self, loop: asyncio.AbstractEventLoop, http: HttpClient) -> None:
        verifiers = self.client.group_verifiers()
        if not verifiers:
            return
        by_key: Dict[Tuple[str, str], List[int]] = {}
        for i, row in enumerate(self.examples):
            ref = row.get("agent_ref") if isinstance(row, dict) else None
            agent = ref.get("name") if isinstance(ref, dict) else None
            if not isinstance(agent, str) or not isinstance(verifiers.get(agent), dict):
                continue
            if "server" not in verifiers[agent]:
                # A group verify the head server could not read: no row of that agent gets a per-rollout reward instead.
                raise RolloutError(f"agent `{agent}`: its resources server's group verify settings are invalid: {verifiers[agent].get('error')}", reason="bad_row", agent_name=agent)
            task = row.get("_ng_task_index")
            key = f"task:{task}" if isinstance(task, int) else "params:" + json.dumps(row.get("responses_create_params"), sort_keys=True)
            by_key.setdefault((agent, key), []).append(i)
        for (agent, _), members in by_key.items():
            group = _Group(self, loop, http, agent, verifiers[agent], members)
            for i in members:
                self.groups[i] = group

    async def _run(self, i: int, row: Dict, http: HttpClient) -> Tuple[Dict, Dict]:
        group = self.groups.get(i)
        async with self.semaphore:
            task = asyncio.current_task()
            self.running.append(task)  # type: ignore[arg-type]
            try:
                if group is None:
                    return row, await self.helper._post_run(self.client, row, http, self.timeout_s)
                result = await group.run_member(i, self.helper._post_run(self.client, row, http, self.timeout_s))
            finally:
                try:
                    self.running.remove(task)  # type: ignore[arg-type]
                except ValueError:
                    pass
        # Out of the semaphore: the other members of the group need it to finish.
        return row, await group.result_for(i, result)

    def _on_done(self, task: asyncio.Task) -> None:
        if task in self.claimed:
            self.claimed.discard(task)
            if not task.cancelled():
                task.exception()  # retrieved: no "exception never retrieved" warning
            return
        while self.waiters:
            fut = self.waiters.popleft()
            if not fut.done():
                fut.set_result(task)
                return
        self.ready.append(task)

    def claim_one(self) -> None:
        """A pending awaitable was cancelled: cancel one unfinished rollout, whose result is then dropped."""
        pending = [t for t in self.tasks if not t.done() and t not in self.claimed]
        if not pending:
            return  # everything finished already: the results stay for the other awaitables
        running = set(self.running)
        waiting = [t for t in pending if t not in running]
        victim = waiting[-1] if waiting else max(pending, key=lambda t: self.running.index(t) if t in running else -1)
        self.claimed.add(victim)
        victim.cancel()

    def cancel_all(self) -> None:
        """Cancel every unfinished rollout; safe to call from any thread (a finalizer may run in one)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._cancel_all_now()
        else:
            try:
                loop.call_soon_threadsafe(self._cancel_all_now)
            except RuntimeError:  # the loop closed meanwhile
                pass

    def _cancel_all_now(self) -> None:
        for t in self.tasks:
            if not t.done():
                self.claimed.add(t)
                t.cancel()


def _member_id(row: Dict, i: int) -> str:
    t, r = row.get("_ng_task_index"), row.get("_ng_rollout_index")
    return f"{t}-{r}" if isinstance(t, int) and isinstance(r, int) else f"row{i}"


class _Group:
    """The rows of one task whose results are scored together by the resources server's /verify_group."""

    def __init__(self, batch: _Batch, loop: asyncio.AbstractEventLoop, http: HttpClient, agent: str, verifier: Dict[str, Any], members: List[int]) -> None:
        self.batch = batch
        self.loop = loop
        self.http = http
        self.agent = agent
        self.server = str(verifier["server"])
        self.wait_s = float(verifier.get("group_wait_timeout_s") or 600)
        self.fail_group = verifier.get("group_member_failure") == "fail_group"
        self.members = members
        self.results: Dict[int, Dict] = {}
        self.failed: Set[int] = set()
        self.closed: asyncio.Future = loop.create_future()
        self.outcome: asyncio.Future = loop.create_future()
        self.timer: Optional[asyncio.TimerHandle] = None
        self.scoring: Optional[asyncio.Future] = None

    def _error(self, message: str) -> RolloutError:
        return RolloutError(message, reason="group_failed", code="NG_ERR_GROUP_VERIFY", agent_name=self.agent)

    async def run_member(self, i: int, post: Any) -> Optional[Dict]:
        """The member's rollout, given up when its group stops waiting for it (the deadline passed)."""
        if self.closed.done():
            post.close()
            raise self._error(f"row {i} was not run: its group ({self.server}) was closed ({self.closed.result()})")
        run = asyncio.ensure_future(post)
        try:
            await asyncio.wait({run, self.closed}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            run.cancel()
            self._progress(i, None)
            raise
        if not run.done():
            run.cancel()
            raise self._error(f"row {i} did not finish within group_wait_timeout_s={self.wait_s:g} ({self.closed.result()})")
        try:
            result = run.result()
        except BaseException:
            self._progress(i, None)
            raise
        return result

    async def result_for(self, i: int, result: Optional[Dict]) -> Dict:
        self._progress(i, result)
        outcome = await asyncio.shield(self.outcome)
        got = outcome.get(i)
        if isinstance(got, BaseException):
            raise got
        if got is None:
            raise self._error(f"row {i} finished after its group was scored ({self.closed.result()})")
        return got

    def _progress(self, i: int, result: Optional[Dict]) -> None:
        if self.closed.done():
            return
        if result is None:
            self.failed.add(i)
        else:
            self.results[i] = result
        if len(self.results) + len(self.failed) >= len(self.members):
            self._close("every member finished")
        elif self.timer is None:
            self.timer = self.loop.call_later(self.wait_s, self._close, f"group_wait_timeout_s={self.wait_s:g} passed")

    def _close(self, why: str) -> None:
        if self.closed.done():
            return
        if self.timer is not None:
            self.timer.cancel()
        self.closed.set_result(why)
        self.scoring = asyncio.ensure_future(self._score())

    async def _score(self) -> None:
        missing = [i for i in self.members if i not in self.results and i not in self.failed]
        held = sorted(self.results)
        outcome: Dict[int, Any] = {}
        try:
            if held and self.fail_group and (self.failed or missing):
                err = self._error(f"the group of {len(self.members)} rows is recorded as failed (group_member_failure=fail_group): {len(self.failed)} failed, {len(missing)} unfinished")
                outcome = {i: err for i in held}
            elif held:
                outcome = await self._verify_group(held)
        except BaseException as err:  # noqa: BLE001 (every member gets the failure; nothing is scored)
            failure = err if isinstance(err, RolloutError) else self._error(f"/verify_group of {self.server} failed: {err}")
            outcome = {i: failure for i in held}
        finally:
            if not self.outcome.done():
                self.outcome.set_result(outcome)

    async def _verify_group(self, held: List[int]) -> Dict[int, Any]:
        rows = self.batch.examples
        ids = {_member_id(rows[i], i): i for i in held}
        members = [dict({k: v for k, v in self.results[i].items() if not k.startswith("_ng_")}, member_id=mid) for mid, i in ids.items()]
        first = rows[held[0]]
        body = {"task_index": first.get("_ng_task_index"), "num_repeats": len(self.members), "members": members}
        address = self.batch.client.address(self.server)
        if address is None:
            raise self._error(f"resources server `{self.server}` is not a running server of the head server {self.batch.client.head_url}")
        host, port = address
        status, _, raw = await self.http.request("POST", host, port, "/verify_group", json.dumps(body, ensure_ascii=False).encode("utf-8"))
        text = raw.decode("utf-8", errors="replace")
        answer: Any = None
        try:
            answer = json.loads(text)
        except ValueError:
            pass
        if status != 200:
            code = answer.get("code") if isinstance(answer, dict) and isinstance(answer.get("code"), str) else None
            raise RolloutHTTPError(f"POST http://{host}:{port}/verify_group ({self.server}) answered HTTP {status}: {text[:2000]}", status=status, reason=failure_reason(status, code), code=code, detail=text, agent_name=self.agent)
        scores = answer.get("members") if isinstance(answer, dict) else None
        got: Dict[str, Dict] = {}
        for m in scores if isinstance(scores, list) else []:
            if isinstance(m, dict) and m.get("member_id") in ids and isinstance(m.get("reward"), (int, float)) and not isinstance(m.get("reward"), bool):
                got[m["member_id"]] = m
        if len(got) != len(ids):
            raise self._error(f"{self.server} answered /verify_group without one reward for each of the {len(ids)} members")
        outcome: Dict[int, Any] = {}
        for mid, i in ids.items():
            own = self.results[i]
            extra = {k: v for k, v in got[mid].items() if k not in ("member_id", "reward")}
            row = dict(own)
            row["reward"] = got[mid]["reward"]
            if isinstance(own.get("reward"), (int, float)):
                row["verify_reward"] = own["reward"]
            row["group_verify"] = dict({"member_id": mid, "members": len(ids), "num_repeats": len(self.members)}, **extra)
            outcome[i] = row
        return outcome


class _Completion:
    """One awaitable of the iterator: the next rollout to complete."""

    __slots__ = ("_iterator", "_batch", "__weakref__")

    def __init__(self, iterator: "RolloutIterator", batch: _Batch) -> None:
        self._iterator = iterator  # keeps the iterator (and so the batch) alive while held
        self._batch = batch

    def __await__(self):
        return self._wait().__await__()

    async def _wait(self) -> Tuple[Dict, Dict]:
        batch = self._batch
        batch.start()
        if batch.ready:
            task = batch.ready.popleft()
        else:
            fut = asyncio.get_running_loop().create_future()
            batch.waiters.append(fut)
            try:
                task = await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    # A result was handed to us as we were cancelled: give it to the next awaitable.
                    batch.ready.appendleft(fut.result())
                else:
                    try:
                        batch.waiters.remove(fut)
                    except ValueError:
                        pass
                batch.claim_one()
                raise
        return task.result()


class RolloutIterator:
    """What run_examples returns: an iterator of awaitables in completion order (see the module doc)."""

    def __init__(self, batch: _Batch) -> None:
        self._batch = batch
        self._given = 0
        self._total = len(batch.examples)
        # Nobody can await the rest once the iterator and its awaitables are gone: stop those rollouts.
        self._finalizer = weakref.finalize(self, batch.cancel_all)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # started on the first await
        else:
            batch.start()

    def __iter__(self) -> "RolloutIterator":
        return self

    def __next__(self) -> _Completion:
        if self._given >= self._total:
            raise StopIteration
        self._given += 1
        return _Completion(self, self._batch)

    def __len__(self) -> int:
        return self._total

    @property
    def tasks(self) -> List[asyncio.Task]:
        """Row i's task (in input order); started on the first await when created outside a loop."""
        if not self._batch.started:
            self._batch.start()
        return self._batch.tasks

    def cancel(self) -> None:
        """Cancel every rollout of this batch that has not finished."""
        self._batch.cancel_all()


class RolloutCollectionHelper:
    """Upstream's helper. ``run_examples`` is the trainers' entry point.

    ``timeout_s`` bounds each rollout (default 3 h; also ``rollout_timeout_s`` in the call);
    ``connections_per_host`` caps the sockets to one agent address (default: the head server's
    ``global_aiohttp_connector_limit_per_host`` when RunHelper started it, else 1024).
    """

    def __init__(self, timeout_s: Optional[float] = None, connections_per_host: Optional[int] = None, connect_timeout_s: float = 30.0) -> None:
        self.timeout_s = DEFAULT_ROLLOUT_TIMEOUT_S if timeout_s is None else timeout_s
        self.connections_per_host = connections_per_host
        self.connect_timeout_s = connect_timeout_s
        # One client (and its pools) per event loop: connections are reused across calls.
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HttpClient]" = weakref.WeakKeyDictionary()
        self._server_clients: Dict[Tuple[str, int], ServerClient] = {}

    def model_dump(self) -> Dict[str, Any]:  # upstream's is a pydantic model with no fields
        return {}

    def _http_client(self, loop: asyncio.AbstractEventLoop) -> HttpClient:
        client = self._clients.get(loop)
        if client is None:
            limit = self.connections_per_host
            if limit is None:
                from nemo_gym.cli import _configured_connection_limit

                limit = _configured_connection_limit() or DEFAULT_CONNECTIONS_PER_HOST
            _raise_nofile_limit(min(limit, 65536))
            client = self._clients[loop] = HttpClient(limit_per_host=limit, connect_timeout_s=self.connect_timeout_s)
        return client

    def setup_server_client(self, head_server_config: Optional[BaseServerConfig] = None) -> ServerClient:
        client = ServerClient(head_server_config)
        key = (client.head_server_config.host, client.head_server_config.port)
        cached = self._server_clients.get(key)
        if cached is None:
            cached = self._server_clients[key] = client
        cached.refresh()
        return cached

    def run_examples(
        self,
        examples: List[Dict],
        head_server_config: Optional[BaseServerConfig] = None,
        semaphore: Optional[Union[asyncio.Semaphore, int]] = None,
        rollout_timeout_s: Optional[float] = None,
    ) -> RolloutIterator:
        """An iterator of awaitables, one per row, each giving ``(row, result)`` as rollouts complete."""
        server_client = self.setup_server_client(head_server_config)
        if isinstance(semaphore, int) and not isinstance(semaphore, bool):
            semaphore = asyncio.Semaphore(semaphore)
        batch = _Batch(self, list(examples), server_client, semaphore or nullcontext(), self.timeout_s if rollout_timeout_s is None else rollout_timeout_s)
        return RolloutIterator(batch)

    async def _post_run(self, server_client: ServerClient, row: Dict, http: HttpClient, timeout_s: Optional[float]) -> Dict:
        try:
            name = row["agent_ref"]["name"]
        except (KeyError, TypeError):
            raise UnknownServerError("The row has no agent_ref.name: every row needs agent_ref: {name: <agent instance>} to be routed", reason="bad_row") from None
        address = server_client.address(name)
        if address is None:
            server_client.refresh()
            address = server_client.address(name)
            if address is None:
                raise UnknownServerError(
                    f"agent_ref.name `{name}` is not a running server of the head server {server_client.head_url}; running: {', '.join(server_client.names()) or 'none'}",
                    reason="bad_row",
                    agent_name=name,
                )
        host, port = address
        url = f"http://{host}:{port}/run"
        body = json.dumps(row, ensure_ascii=False).encode("utf-8")
        try:
            if timeout_s is None or timeout_s <= 0:
                status, headers, raw = await http.request("POST", host, port, "/run", body)
            else:
                status, headers, raw = await asyncio.wait_for(http.request("POST", host, port, "/run", body), timeout_s)
        except asyncio.TimeoutError:
            raise RolloutTimeoutError(f"POST {url} (agent `{name}`) gave no answer within {timeout_s} s; the connection was closed, which stops the rollout", reason="timeout", url=url, agent_name=name) from None
        except TransportError as err:
            what = "could not be reached" if not err.sent else "closed the connection before answering"
            raise RolloutConnectionError(f"POST {url}: agent `{name}` {what} ({err})", reason="agent_unreachable", url=url, agent_name=name) from None
        text = raw.decode("utf-8", errors="replace")
        if status != 200:
            code = None
            detail = text
            try:
                payload = json.loads(text)
                if isinstance(payload, dict):
                    d = payload.get("detail", payload.get("message", text))
                    detail = d if isinstance(d, str) else json.dumps(d)
                    code = payload.get("code") if isinstance(payload.get("code"), str) else None
            except ValueError:
                pass
            reason = failure_reason(status, code)
            raise RolloutHTTPError(
                f"POST {url} (agent `{name}`) answered HTTP {status}{f' {code}' if code else ''} [{reason}]: {detail[:2000]}",
                status=status,
                reason=reason,
                code=code,
                detail=detail,
                url=url,
                agent_name=name,
                response_content=raw,
            )
        try:
            result = json.loads(text)
        except ValueError as err:
            raise RolloutError(f"POST {url} (agent `{name}`) answered 200 with a body that is not JSON ({err}): {text[:300]}", reason="bad_result", url=url, agent_name=name, response_content=raw) from None
        failed_class = result.get("_ng_failure_class") if isinstance(result, dict) else None
        if isinstance(failed_class, str) and failed_class:
            # Upstream's failed row (nemo_gym/judge.py: reward 0.0 with `_ng_failure_class`) is a failure, never a reward.
            judge = failed_class == "judge_failed"
            raise RolloutError(
                f"POST {url} (agent `{name}`) answered a row marked _ng_failure_class={failed_class!r}: {result.get('_ng_failure_judge_error', '')}",
                status=status,
                reason="judge_failed" if judge else "bad_result",
                code="NG_ERR_JUDGE_FAILED" if judge else "NG_ERR_BAD_RESULT",
                url=url,
                agent_name=name,
            )
        return flag_masked_sample(result)
