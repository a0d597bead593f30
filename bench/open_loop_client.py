"""The open loop's own HTTP/1.1 client (scenario o, bench/open_loop.py): lean, so that the
load generator stops taking CPU from the stack it measures.

On this 2-core machine aiohttp cost the generator about 0.8 ms CPU a request (URL and header
objects, a multidict per response, the payload machinery, the trace hooks, a task per
request), a quarter of what the web tier spends, on the same cores, and the open loop's p99
is a whole-machine CPU queue.  Here every arrival's request is bytes made before the start
gate; each keep-alive connection is one asyncio.Protocol (uvloop's too) that reads only the
status line and what delimits the body (Content-Length, chunked, or the close); an answer is
one callback, with no task, header dict or body object.

What it keeps from aiohttp's behaviour in bench/flash_sale_load.py: a bounded pool (a
request that finds every connection busy waits for one, its wait counted), the most
recently used idle connection first, no retry, no pipelining (one request in flight per
connection), a timeout from the call (pool wait and connect included) that answers 599, as
does any connection or protocol error.  The plain functions are tested in
tests/project/test_open_loop_client.py against a real local server.
"""

from __future__ import annotations

import asyncio
import collections
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

TIMEOUT = 60.0  # aiohttp's ClientTimeout(total=60) in flash_sale_load.py
FAILED = 599  # what flash_sale_load.py records for a timeout or a client error
MAX_HEAD = 65536
TIMER_SLACK = 0.001  # the event loop's timer resolution (libuv: milliseconds)

# done(status, answered at (perf_counter), new connection, connect seconds)
Done = Callable[[int, float, bool, float], None]


def encode_post(host: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """One POST as bytes.  Accept: */* as aiohttp sends it (the API's content negotiation
    reads it); no Accept-Encoding (nothing here decompresses, and the stack compresses
    nothing)."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Accept: */*"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += ["Content-Type: application/json", f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


class ResponseParser:
    """One HTTP/1.1 response, fed as it arrives; the body is counted and dropped.  `feed`
    is true once the response is complete; then `status` and `keep_alive` are set."""

    __slots__ = ("_left", "_trailers", "buf", "keep_alive", "mode", "status")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.status = 0
        self.keep_alive = False
        self.mode = ""  # then "length", "chunked" or "close": what delimits the body
        self._left = -1  # length: bytes to come; chunked: of this chunk and its CRLF, or -1
        self._trailers = False  # chunked: after the last chunk

    def feed(self, data: bytes) -> bool:
        self.buf += data
        if not self.mode and not self._head():
            return False
        if self.mode == "length":
            if len(self.buf) < self._left:
                return False
            return self._finish(len(self.buf) - self._left)
        if self.mode == "chunked":
            return self._chunks()
        self.buf.clear()  # until the close
        return False

    def eof(self) -> bool:
        """At the connection's end: true when that end is what completes the body (no
        Content-Length and not chunked, as HTTP/1.0 servers may answer)."""
        return self.mode == "close"

    def _head(self) -> bool:
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > MAX_HEAD:
                    raise ValueError("response head too long")
                return False
            lines = bytes(self.buf[:end]).split(b"\r\n")
            del self.buf[: end + 4]
            version, _, rest = lines[0].partition(b" ")
            if not version.startswith(b"HTTP/1."):
                raise ValueError(f"not an HTTP/1 status line: {lines[0][:40]!r}")
            status = int(rest[:3])
            if 100 <= status < 200:  # informational: the real head follows
                continue
            keep_alive = version == b"HTTP/1.1"
            length, chunked = None, False
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding":
                    chunked = b"chunked" in value.lower()
                elif name == b"connection":
                    value = value.lower()
                    if b"close" in value:
                        keep_alive = False
                    elif b"keep-alive" in value:
                        keep_alive = True
            self.status, self.keep_alive = status, keep_alive
            if status in (204, 304):
                self.mode, self._left = "length", 0
            elif chunked:
                self.mode = "chunked"
            elif length is not None:
                self.mode, self._left = "length", length
            else:  # the body ends with the connection
                self.mode, self.keep_alive = "close", False
            return True

    def _chunks(self) -> bool:
        buf = self.buf
        while True:
            if self._left < 0:  # a size line, or a trailer line after the last chunk
                end = buf.find(b"\r\n")
                if end < 0:
                    return False
                line = bytes(buf[:end])
                del buf[: end + 2]
                if self._trailers:
                    if not line:
                        return self._finish(len(buf))
                    continue
                size = int(line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    self._trailers = True
                    continue
                self._left = size + 2  # the data and its CRLF
            if len(buf) < self._left:
                self._left -= len(buf)
                buf.clear()
                return False
            del buf[: self._left]
            self._left = -1

    def _finish(self, extra: int) -> bool:
        if extra:  # bytes after the answer to the one request in flight: not reusable
            self.keep_alive = False
        self.buf.clear()
        return True


class _Request:
    __slots__ = ("conn", "connect", "deadline", "done", "finished", "new", "payload")

    def __init__(self, payload: bytes, done: Done) -> None:
        self.payload, self.done = payload, done
        self.deadline = 0.0
        self.conn: _Connection | None = None
        self.finished = self.new = False
        self.connect = 0.0


class _Connection(asyncio.Protocol):
    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.request: _Request | None = None
        self.parser: ResponseParser | None = None
        self.closed = self.dropped = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.request is None or self.parser is None:  # nothing asked: not ours to read
            self.pool._drop(self)
            return
        try:
            complete = self.parser.feed(data)
        except ValueError:
            self.pool._answered(self, FAILED, keep_alive=False)
            return
        if complete:
            self.pool._answered(self, self.parser.status, keep_alive=self.parser.keep_alive)

    def connection_lost(self, exc) -> None:
        self.closed = True
        if self.request is not None:
            ended = self.parser is not None and self.parser.eof()
            self.pool._answered(self, self.parser.status if ended else FAILED, keep_alive=False)
        else:
            self.pool._drop(self)


class Pool:
    """At most `limit` connections to host:port, open or opening, each reused while the
    server keeps it alive."""

    def __init__(
        self, host: str, port: int, *, limit: int, timeout: float = TIMEOUT, parser=None
    ) -> None:
        self.host, self.port, self.limit, self.timeout = host, port, limit, timeout
        self.parser = parser or ResponseParser  # tests hand in a broken one as a control
        self.loop = asyncio.get_running_loop()
        self.idle: list[_Connection] = []
        self.waiting: collections.deque[_Request] = collections.deque()
        self.open = 0
        self.peak = 0  # the most connections open or opening at once
        # Requests in the order sent, so in the order of their deadlines: one sweep timer
        # for all of them, not a timer each (a libuv timer started and stopped a request).
        self.inflight: collections.deque[_Request] = collections.deque()
        self.sweeping = False
        self.sweep_every = min(0.5, timeout / 4)  # a 599 at most this late

    def send(self, payload: bytes, done: Done) -> None:
        """Send `payload` on the most recently idle connection, a new one while under the
        limit, or the first to come free; `done` is called once, answered or not."""
        req = _Request(payload, done)
        req.deadline = time.perf_counter() + self.timeout
        self.inflight.append(req)
        if not self.sweeping:
            self.sweeping = True
            self.loop.call_later(self.sweep_every, self._sweep)
        self._dispatch(req)

    async def request(self, payload: bytes) -> tuple[int, bool, float]:
        """`send` awaited: (status, new connection, connect seconds)."""
        answer: asyncio.Future = self.loop.create_future()
        self.send(payload, lambda status, _, new, took: answer.set_result((status, new, took)))
        return await answer

    def close(self) -> None:
        for conn in self.idle:
            self._drop(conn)
        self.idle.clear()

    def _dispatch(self, req: _Request) -> None:
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed:
                self._start(conn, req)
                return
        if self.open < self.limit:
            self._open(req)
        else:
            self.waiting.append(req)

    def _open(self, req: _Request) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)
        self.loop.create_task(self._connect(req))

    async def _connect(self, req: _Request) -> None:
        began = time.perf_counter()
        try:
            _, conn = await self.loop.create_connection(
                lambda: _Connection(self), self.host, self.port
            )
        except OSError:
            self.open -= 1
            self._finish(req, FAILED)
            self._fill()
            return
        req.new, req.connect = True, time.perf_counter() - began
        if req.finished:  # timed out while connecting: the connection serves the next one
            self._release(conn)
        else:
            self._start(conn, req)

    def _start(self, conn: _Connection, req: _Request) -> None:
        conn.request, conn.parser, req.conn = req, self.parser(), conn
        conn.transport.write(req.payload)

    def _answered(self, conn: _Connection, status: int, *, keep_alive: bool) -> None:
        req, conn.request = conn.request, None
        if req is not None:
            self._finish(req, status)
        if keep_alive and not conn.closed:
            self._release(conn)
        else:
            self._drop(conn)

    def _release(self, conn: _Connection) -> None:
        while self.waiting:
            req = self.waiting.popleft()
            if not req.finished:
                self._start(conn, req)
                return
        self.idle.append(conn)

    def _drop(self, conn: _Connection) -> None:
        """Close `conn` (if not already) and free its place under the limit, once."""
        if conn.dropped:
            return
        conn.dropped = True
        self.open -= 1
        if not conn.closed and conn.transport is not None:
            conn.transport.abort()  # nothing more is read from it, and nothing is flushed
        conn.request = None
        self._fill()

    def _fill(self) -> None:
        while self.waiting and self.open < self.limit:
            req = self.waiting.popleft()
            if not req.finished:
                self._open(req)

    def _sweep(self) -> None:
        now, inflight = time.perf_counter(), self.inflight
        while inflight and (inflight[0].finished or inflight[0].deadline <= now):
            self._expire(inflight.popleft())
        self.sweeping = bool(inflight)
        if self.sweeping:
            self.loop.call_later(self.sweep_every, self._sweep)

    def _expire(self, req: _Request) -> None:
        if req.finished:
            return
        conn = req.conn
        self._finish(req, FAILED)
        if conn is not None and conn.request is req:  # an answer may still come: not reusable
            self._drop(conn)

    def _finish(self, req: _Request, status: int) -> None:
        if req.finished:
            return
        req.finished = True
        req.done(status, time.perf_counter(), req.new, req.connect)


async def run_open_loop(
    spec: dict[str, Any], *, limit: int, body: Callable[[int, int], dict[str, Any]]
) -> dict[str, Any]:
    """bench/flash_sale_load.py's open loop on this client: the same Poisson schedule, the
    same requests (`body(flight, index)` as JSON, the customer's token, an X-Request-ID),
    the same records and traces, all latencies from the scheduled time (no coordinated
    omission), and the generator's own CPU seconds from the start gate to the last answer."""
    from bench.open_loop import poisson_schedule

    url = urlsplit(spec["base_url"])
    tokens, flights = spec["tokens"], spec["arrival_flights"]
    seed = spec.get("seed", 7)
    schedule = poisson_schedule(rate=spec["rate"], seconds=spec["seconds"], seed=seed)
    request_ids = [f"open-loop-{seed}-{i:06d}" for i in range(len(schedule))]
    payloads = [
        encode_post(
            url.netloc,
            "/api/bookings",
            json.dumps(body(flights[i], i)).encode(),
            {"Authorization": f"Token {tokens[i % len(tokens)]}", "X-Request-ID": request_ids[i]},
        )
        for i in range(len(schedule))
    ]
    pool = Pool(url.hostname or "127.0.0.1", url.port or 80, limit=limit, timeout=TIMEOUT)
    records: list[tuple[float, float, int, bool]] = []
    traces: list[tuple] = []
    left = {"n": len(schedule)}
    all_done = pool.loop.create_future()

    def arrival(i: int, due: float) -> None:
        sent, sent_wall = time.perf_counter(), time.time()

        def done(status: int, answered: float, new: bool, connect: float) -> None:
            records.append((due, answered - due, status, status == 201))
            traces.append((due, sent, answered - sent, status, new, connect, request_ids[i],
                           sent_wall))  # fmt: skip
            left["n"] -= 1
            if not left["n"]:
                all_done.set_result(None)

        pool.send(payloads[i], done)

    following = 0

    def tick() -> None:
        """Send every arrival due by now, then wait on one timer for the next: a callback a
        wake-up, not a task's sleep (its future and resumption cost ~30 us more an arrival
        on uvloop).  uvloop's timers are libuv's, rounded to the millisecond, so one may
        fire up to a millisecond early (so did the sleep before): an arrival due within
        TIMER_SLACK is sent, where waiting for its exact time spun the loop, 40 wake-ups
        an arrival."""
        nonlocal following
        now = time.perf_counter() + TIMER_SLACK
        while following < len(schedule) and started + schedule[following] <= now:
            arrival(following, started + schedule[following])
            following += 1
        if following < len(schedule):
            pool.loop.call_later(started + schedule[following] - time.perf_counter(), tick)

    await asyncio.sleep(0.2)  # as the aiohttp loop's tasks wait at the gate
    started, started_wall, cpu = time.perf_counter(), time.time(), time.process_time()
    tick()
    if schedule:
        await all_done
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    pool.close()
    return {
        "elapsed": elapsed,
        "gate": started,  # perf_counter is CLOCK_MONOTONIC on Linux (--records)
        "started_wall": started_wall,
        "generator_cpu": cpu,
        "records": [(t0 - started, lat, st, win) for t0, lat, st, win in records],
        "traces": [(due - started, sent - started, *rest) for due, sent, *rest in traces],
    }
