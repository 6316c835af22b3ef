"""A small HTTP/1.1 client on asyncio protocols: keep-alive connection pools per host, one request
per connection at a time, a connect timeout, and cancellation that closes the connection.

Closing the connection is how a cancelled rollout reaches the servers: the agent sees its client
go away and cancels its tool calls and model calls, and vllm_model closes its request to the
backend, so the generation stops.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Deque, Dict, List, Optional, Tuple

_CRLF2 = b"\r\n\r\n"


class TransportError(Exception):
    """The connection failed or closed before a whole answer arrived."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        #: Whether any byte of the request may have reached the server.
        self.sent = sent


class _Connection(asyncio.Protocol):
    __slots__ = ("transport", "closed", "_buf", "_future", "_status", "_headers", "_length", "_chunked", "_body_start", "_keep_alive_s", "_close_after", "expires", "_sent")

    def __init__(self) -> None:
        self.transport: Optional[asyncio.Transport] = None
        self.closed = False
        self._buf = bytearray()
        self._future: Optional[asyncio.Future] = None
        self._reset()
        self.expires = 0.0
        self._sent = False

    def _reset(self) -> None:
        self._status = 0
        self._headers: Optional[Dict[str, str]] = None
        self._length = -1
        self._chunked = False
        self._body_start = 0
        self._keep_alive_s = 4.0
        self._close_after = False

    # asyncio.Protocol
    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport

    def connection_lost(self, exc) -> None:  # type: ignore[override]
        self.closed = True
        fut = self._future
        if fut is not None and not fut.done():
            # A body without Content-Length ends with the connection.
            if self._headers is not None and self._length < 0 and not self._chunked:
                fut.set_result((self._status, self._headers, bytes(self._buf[self._body_start :])))
            else:
                reason = f"connection closed before the answer was complete ({exc})" if exc else "connection closed by the server before the answer was complete"
                fut.set_exception(TransportError(reason, sent=self._sent))
        self._future = None

    def data_received(self, data: bytes) -> None:  # type: ignore[override]
        if self._future is None:
            # Bytes nobody asked for: the connection cannot be trusted any more.
            self.abort()
            return
        self._buf += data
        try:
            self._parse()
        except Exception as err:  # a malformed answer
            fut = self._future
            self._future = None
            self.abort()
            if fut is not None and not fut.done():
                fut.set_exception(TransportError(f"malformed HTTP answer: {err}", sent=True))

    def _parse(self) -> None:
        buf = self._buf
        if self._headers is None:
            end = buf.find(_CRLF2)
            if end < 0:
                if len(buf) > 1 << 20:
                    raise ValueError("headers larger than 1 MiB")
                return
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
                raise ValueError(f"bad status line {lines[0][:80]!r}")
            self._status = int(parts[1])
            headers: Dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            self._headers = headers
            self._body_start = end + 4
            if "content-length" in headers:
                self._length = int(headers["content-length"])
            elif "chunked" in headers.get("transfer-encoding", "").lower():
                self._chunked = True
            conn = headers.get("connection", "").lower()
            self._close_after = conn == "close" or parts[0] == "HTTP/1.0"
            ka = headers.get("keep-alive", "")
            for item in ka.split(","):
                k, _, v = item.strip().partition("=")
                if k.strip().lower() == "timeout":
                    try:
                        self._keep_alive_s = float(v)
                    except ValueError:
                        pass
            if self._status in (204, 304) or 100 <= self._status < 200:
                self._length = 0
        if self._length >= 0:
            if len(buf) - self._body_start >= self._length:
                body = bytes(buf[self._body_start : self._body_start + self._length])
                self._finish(body)
        elif self._chunked:
            body = self._dechunk()
            if body is not None:
                self._finish(body)

    def _dechunk(self) -> Optional[bytes]:
        buf = self._buf
        pos = self._body_start
        out = bytearray()
        while True:
            nl = buf.find(b"\r\n", pos)
            if nl < 0:
                return None
            size = int(bytes(buf[pos:nl]).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                # trailers end with an empty line
                end = buf.find(_CRLF2, nl)
                if end < 0 and buf[nl : nl + 4] != _CRLF2:
                    if buf.find(b"\r\n", nl + 2) != nl + 2:
                        return None
                return bytes(out)
            start = nl + 2
            if len(buf) < start + size + 2:
                return None
            out += buf[start : start + size]
            pos = start + size + 2

    def _finish(self, body: bytes) -> None:
        fut = self._future
        self._future = None
        status, headers = self._status, self._headers or {}
        if self._close_after:
            self.close()
        else:
            self.expires = time.monotonic() + max(0.0, self._keep_alive_s - 1.0)
        self._buf = bytearray()
        self._reset()
        if fut is not None and not fut.done():
            fut.set_result((status, headers, body))

    # client side
    def send(self, data: bytes) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._future = fut
        self._sent = True
        assert self.transport is not None
        self.transport.write(data)
        return fut

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class _HostPool:
    __slots__ = ("host", "port", "limit", "idle", "count", "waiters")

    def __init__(self, host: str, port: int, limit: int) -> None:
        self.host = host
        self.port = port
        self.limit = limit
        self.idle: Deque[_Connection] = deque()
        self.count = 0
        self.waiters: Deque[asyncio.Future] = deque()


class HttpClient:
    """Keep-alive pools keyed by (host, port). Not thread-safe: use it from one event loop."""

    def __init__(self, limit_per_host: int = 1024, connect_timeout_s: float = 30.0) -> None:
        self.limit_per_host = max(1, int(limit_per_host))
        self.connect_timeout_s = connect_timeout_s
        self._pools: Dict[Tuple[str, int], _HostPool] = {}
        self.loop: Optional[asyncio.AbstractEventLoop] = None

    def _pool(self, host: str, port: int) -> _HostPool:
        key = (host, port)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = _HostPool(host, port, self.limit_per_host)
        return pool

    async def _acquire(self, pool: _HostPool) -> _Connection:
        now = time.monotonic()
        while pool.idle:
            conn = pool.idle.pop()
            if not conn.closed and conn.expires > now:
                return conn
            conn.close()
            pool.count -= 1
        if pool.count >= pool.limit:
            fut = asyncio.get_running_loop().create_future()
            pool.waiters.append(fut)
            try:
                handed = await fut
            except BaseException:
                if fut.done() and not fut.cancelled() and fut.result() is not None:
                    self._release(pool, fut.result(), reusable=True)
                elif fut.done() and not fut.cancelled():
                    pool.count -= 1
                    self._wake(pool)
                try:
                    pool.waiters.remove(fut)
                except ValueError:
                    pass
                raise
            if handed is not None:
                return handed
            # a slot was freed: open a new connection in it (count already taken for us)
        else:
            pool.count += 1
        try:
            loop = asyncio.get_running_loop()
            try:
                _, conn = await asyncio.wait_for(loop.create_connection(_Connection, pool.host, pool.port), self.connect_timeout_s)
            except asyncio.TimeoutError:
                raise TransportError(f"could not connect to {pool.host}:{pool.port} within {self.connect_timeout_s:g} s", sent=False) from None
            except OSError as err:
                raise TransportError(f"could not connect to {pool.host}:{pool.port}: {err}", sent=False) from None
        except BaseException:
            pool.count -= 1
            self._wake(pool)
            raise
        return conn

    def _wake(self, pool: _HostPool) -> None:
        """A connection slot is free: give it to a waiter (who then opens a connection)."""
        while pool.waiters and pool.count < pool.limit:
            fut = pool.waiters.popleft()
            if not fut.done():
                pool.count += 1
                fut.set_result(None)
                return

    def _release(self, pool: _HostPool, conn: _Connection, reusable: bool) -> None:
        if reusable and not conn.closed:
            while pool.waiters:
                fut = pool.waiters.popleft()
                if not fut.done():
                    fut.set_result(conn)
                    return
            pool.idle.append(conn)
            return
        if not conn.closed:
            conn.abort()
        pool.count -= 1
        self._wake(pool)

    async def request(self, method: str, host: str, port: int, path: str, body: Optional[bytes] = None, headers: Optional[List[Tuple[str, str]]] = None) -> Tuple[int, Dict[str, str], bytes]:
        """One request; on cancellation or failure the connection is closed, never reused."""
        pool = self._pool(host, port)
        conn = await self._acquire(pool)
        head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: keep-alive"]
        if body is not None:
            head.append("Content-Type: application/json")
            head.append(f"Content-Length: {len(body)}")
        for k, v in headers or ():
            head.append(f"{k}: {v}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        if body:
            data += body
        ok = False
        try:
            result = await conn.send(data)
            ok = True
            return result
        finally:
            # Cancelled or failed: abort the connection (the server sees the client go away).
            self._release(pool, conn, reusable=ok and not conn.closed)

    def close(self) -> None:
        for pool in self._pools.values():
            while pool.idle:
                pool.idle.pop().close()
            pool.count = 0
        self._pools.clear()
