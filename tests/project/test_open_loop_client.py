"""The open loop's lean HTTP/1.1 client (bench/open_loop_client.py) against a real local
server: statuses, bodies delimited by Content-Length, chunks or the close, keep-alive reuse,
`Connection: close`, a server that never answers (599 at the timeout), the connection bound,
and the same records, traces and requests as the aiohttp generator.  Each guard has a
control: a deliberately broken variant of the client, or of the check, that the test
would catch."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from bench.flash_sale_load import _load
from bench.open_loop_client import TIMER_SLACK, Pool, ResponseParser, encode_post


class Server:
    """An HTTP/1.1 server on 127.0.0.1 whose answer depends on the path; it counts the
    connections it accepted and the most it had open at once, and keeps every request."""

    def __init__(self) -> None:
        self.connections = self.live = self.peak = 0
        self.requests: list[tuple[int, str, dict[str, str], bytes]] = []
        self.port = 0

    async def __aenter__(self) -> Server:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()

    async def handle(self, reader, writer) -> None:
        self.connections += 1
        number, self.live = self.connections, self.live + 1
        self.peak = max(self.peak, self.live)
        try:
            while True:
                try:
                    head = (await reader.readuntil(b"\r\n\r\n")).decode()
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.split("\r\n")
                path = lines[0].split(" ")[1]
                headers = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                self.requests.append((number, path, headers, body))
                if not await self.answer(path, body, writer):
                    return
        finally:
            self.live -= 1
            writer.close()

    async def answer(self, path: str, body: bytes, writer) -> bool:
        """Write the answer; false when the connection is to end."""
        if path.startswith("/status/"):  # the head and the body in separate packets
            payload = b'{"detail": "a body of some length"}'
            await write(writer, head(int(path[8:]), len(payload)), payload[:5], payload[5:])
        elif path == "/chunked":
            await write(
                writer,
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                b"5;ext=1\r\nhello\r\n1",
                b"0\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n",
                b"\r\n",
            )
        elif path == "/close":  # says close, then lingers without reading: only the header
            await write(writer, head(201, 2, "Connection: close\r\n"), b"{}")  # tells
            await asyncio.sleep(1.0)
            return False
        elif path == "/eof":  # neither length nor chunks: the close ends the body
            await write(writer, b"HTTP/1.1 200 OK\r\n\r\n", b"until the end")
            return False
        elif path == "/silent":
            await asyncio.sleep(30)
            return False
        elif path == "/slow":
            await asyncio.sleep(0.05)
            await write(writer, head(201, 2), b"{}")
        elif path == "/api/bookings":  # the open loop's: even flights win
            await asyncio.sleep(0.02)
            status = 201 if json.loads(body)["flightId"] % 2 == 0 else 409
            await write(writer, head(status, 2), b"{}")
        return True


def head(status: int, length: int, extra: str = "") -> bytes:
    return f"HTTP/1.1 {status} X\r\n{extra}content-length: {length}\r\n\r\n".encode()


async def write(writer, *pieces: bytes) -> None:
    for piece in pieces:
        writer.write(piece)
        await writer.drain()
        await asyncio.sleep(0.005)


def post(port: int, path: str) -> bytes:
    return encode_post(f"127.0.0.1:{port}", path, b"{}", {"Authorization": "Token t"})


async def one_by_one(paths: list[str], *, timeout=1.0, parser=None, pool_class=Pool):
    """Each path POSTed after the last was answered, on a pool of one connection:
    (statuses, new-connection flags, the server's connections)."""
    async with Server() as server:
        pool = pool_class("127.0.0.1", server.port, limit=1, timeout=timeout, parser=parser)
        answers = [await pool.request(post(server.port, path)) for path in paths]
        pool.close()
    return [a[0] for a in answers], [a[1] for a in answers], server.connections


def run(coro, loop: str = "asyncio"):
    if loop == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(coro)
    return asyncio.run(coro)


# Broken variants, each the control of one guard below.
class HeadOnly(ResponseParser):
    """Takes the head for the whole answer: the body is left to spoil the next one."""

    def feed(self, data: bytes) -> bool:
        self.buf += data
        return self._head()


class IgnoresChunks(ResponseParser):
    """Does not know Transfer-Encoding: a chunked body is read until the close."""

    def _head(self) -> bool:
        done = super()._head()
        if self.mode == "chunked":
            self.mode, self.keep_alive = "close", False
        return done


class AlwaysKeepAlive(ResponseParser):
    """Reuses every connection, whatever the server said (`Connection: close`)."""

    def _finish(self, extra: int) -> bool:
        super()._finish(extra)
        self.keep_alive = True
        return True


class NeverKeepAlive(ResponseParser):
    def _finish(self, extra: int) -> bool:
        super()._finish(extra)
        self.keep_alive = False
        return True


class NoTimeout(Pool):
    def _expire(self, req) -> None:
        pass


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_statuses_with_content_length_bodies_that_come_in_pieces(loop):
    paths = ["/status/201", "/status/409", "/status/500", "/status/201"]
    assert run(one_by_one(paths), loop) == ([201, 409, 500, 201], [True] + [False] * 3, 1)
    # Control: a parser that stops at the head takes the body for the next answer's head.
    statuses, _, _ = run(one_by_one(paths, parser=HeadOnly, timeout=0.3), loop)
    assert statuses != [201, 409, 500, 201] and 599 in statuses


def test_a_chunked_body_with_extensions_and_trailers_is_read_to_its_end():
    assert run(one_by_one(["/chunked", "/status/409"])) == ([200, 409], [True, False], 1)
    # Control: without chunked decoding the answer waits for a close that never comes.
    statuses, _, _ = run(one_by_one(["/chunked", "/status/409"], parser=IgnoresChunks, timeout=0.3))
    assert statuses[0] == 599


def test_keep_alive_connections_are_reused():
    paths = ["/status/201"] * 5
    assert run(one_by_one(paths)) == ([201] * 5, [True] + [False] * 4, 1)
    # Control: a client that drops each connection shows up in the server's count.
    assert run(one_by_one(paths, parser=NeverKeepAlive)) == ([201] * 5, [True] * 5, 5)


def test_connection_close_and_a_body_ended_by_the_close_open_a_new_connection():
    paths = ["/close", "/status/201", "/eof", "/status/201"]
    # /eof reuses the connection /status/201 left open, then ends it.
    assert run(one_by_one(paths, timeout=0.3)) == ([201, 201, 200, 201], [1, 1, 0, 1], 3)
    # Control: ignoring `Connection: close` sends the next request where nobody reads it.
    statuses, _, _ = run(one_by_one(paths[:2], parser=AlwaysKeepAlive, timeout=0.3))
    assert statuses == [201, 599]


def test_a_server_that_never_answers_is_a_599_at_the_timeout_and_frees_its_place():
    async def scenario(pool_class):
        async with Server() as server:
            pool = pool_class("127.0.0.1", server.port, limit=1, timeout=0.3)
            began = time.perf_counter()
            status, _, _ = await asyncio.wait_for(pool.request(post(server.port, "/silent")), 2)
            took = time.perf_counter() - began
            after = await pool.request(post(server.port, "/status/201"))  # the one place
            pool.close()
            return status, took, after

    status, took, after = run(scenario(Pool))
    assert status == 599 and 0.3 <= took < 1.0
    assert after[:2] == (201, True)  # on a new connection: the silent one is not reused
    # Control: without the timer the request is still waiting two seconds later.
    with pytest.raises(TimeoutError):
        run(scenario(NoTimeout))


def test_the_connections_stay_under_the_bound_and_waiting_requests_get_them():
    async def burst(limit: int):
        async with Server() as server:
            pool = Pool("127.0.0.1", server.port, limit=limit, timeout=5)
            answers = await asyncio.gather(
                *(pool.request(post(server.port, "/slow")) for _ in range(40))
            )
            pool.close()
            return [a[0] for a in answers], server.peak, server.connections, pool.peak

    statuses, peak, connections, pool_peak = run(burst(4))
    assert statuses == [201] * 40 and peak <= 4 and connections == 4 and pool_peak == 4
    # Control: the server's count does see more connections when the bound is wider.
    _, peak, _, _ = run(burst(40))
    assert peak > 4


def open_loop_spec(port: int, client: str, **kw) -> dict:
    return {
        "base_url": f"http://127.0.0.1:{port}",
        "kind": "open_loop",
        "client": client,
        "rate": 200.0,
        "seconds": 0.5,
        "seed": 3,
        "arrival_flights": list(range(200)),
        "tokens": ["alpha", "beta", "gamma"],
        "timeout": 10,
        **kw,
    }


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_the_lean_open_loop_sends_and_records_what_the_aiohttp_one_did(loop):
    async def both():
        out = {}
        for client in ("aiohttp", "lean"):
            async with Server() as server:
                result = await _load(open_loop_spec(server.port, client))
            sent = {}
            for _, path, headers, body in server.requests:
                assert path == "/api/bookings"
                assert headers["content-type"] == "application/json"
                assert headers["accept"] == "*/*"
                sent[headers["x-request-id"]] = (headers["authorization"], json.loads(body))
            out[client] = (result, sent)
        return out

    out = run(both(), loop)
    (old, old_sent), (new, new_sent) = out["aiohttp"], out["lean"]
    assert new_sent == old_sent and len(new_sent) == len(new["records"]) > 50
    assert set(old) <= set(new) and new["generator_cpu"] > 0

    def by_due(result):
        return sorted(result["records"]), sorted(result["traces"])

    for result in (old, new):
        records, traces = by_due(result)
        statuses = [r[2] for r in records]
        assert statuses == [201 if i % 2 == 0 else 409 for i in range(len(records))]
        assert all(won == (status == 201) for _, _, status, won in records)
        for (due, latency, status, _), trace in zip(records, traces, strict=True):
            t_due, sent, lat, t_status, new_conn, connect, request_id, sent_wall = trace
            # uvloop's timers are libuv's, in milliseconds: a sleep may end a little early.
            assert (t_due, t_status) == (due, status) and sent >= due - 0.002
            assert latency == pytest.approx(sent - due + lat)  # from the schedule
            assert (
                isinstance(new_conn, bool)
                and connect >= 0
                and request_id.startswith("open-loop-3-")
            )
            assert abs(sent_wall - time.time()) < 60
    assert [t[6] for t in by_due(new)[1]] == [t[6] for t in by_due(old)[1]]
    # Never more than the timers' resolution early.
    assert all(sent >= due - TIMER_SLACK for due, sent, *_ in new["traces"])


def test_a_queue_for_connections_counts_in_the_latency_no_coordinated_omission():
    async def load(connections: int):
        async with Server() as server:
            return await _load(open_loop_spec(server.port, "lean", connections=connections))

    result = run(load(1))
    records, traces = sorted(result["records"]), sorted(result["traces"])
    assert sum(t[4] for t in traces) == 1  # one connection for the whole run
    # ~100 arrivals in 0.5 s served one at a time, >= 20 ms each: the last waits seconds for
    # the connection though the server spends 20 ms on it, and its latency says so.
    assert records[-1][1] > 1.0
    # Control: with connections enough, the same arrivals wait for none.
    assert max(r[1] for r in run(load(256))["records"]) < 0.5
