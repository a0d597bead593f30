"""Issue 30's sold-out scenario for bench/waiting_room.py (`--scenario sold-out`): N customers
wait in an open room with a queue websocket each; the sale sells out and the admission step
that sees it publishes the news.  Measured from the start of that step (its database work
included) to each socket's "queue closed" message.

    .venv/bin/python bench/waiting_room.py --scenario sold-out --sockets 2000 \
        --ws-workers 2 --clients 2

* The websockets are served by `--ws-workers` uvicorn workers of their own (the `ws` tier of
  docker-compose.yml; the web tier runs beside it, idle), or with `--ws-workers 0` by the
  `--web-workers` of the one server.
* The sockets are spread over `--clients` client processes (uvloop), so that one Python
  process decoding every socket is not what is measured; each client reports its event
  loop's lag (a 5 ms timer, from the step's start to the end) next to what it heard.
* The step runs in this process, which holds no socket: it prints the step's database work
  (to commit), the publish (the channel layer's group_send) and when the first and last
  socket heard, on the one clock all processes share (CLOCK_MONOTONIC).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTEN_SECONDS = 4.0


@dataclass(frozen=True)
class Round:
    """One measurement: who serves the sockets, how many client processes hold them, and
    whether uvicorn offers permessage-deflate (every message compressed per socket)."""

    ws_workers: int
    clients: int
    deflate: bool = True
    two_messages: bool = False

    @classmethod
    def parse(cls, spec: str) -> Round:
        """`WS:CLIENTS[:nodeflate][:twomsg]` (WS 0: the web workers serve them; twomsg: the
        step publishes as before 3 Dec, the sell-out and then its move, two per page)."""
        ws, clients, *rest = spec.split(":")
        return cls(
            int(ws), int(clients), deflate="nodeflate" not in rest, two_messages="twomsg" in rest
        )

    def __str__(self) -> str:
        tier = f"ws tier {self.ws_workers}w" if self.ws_workers else "web workers"
        deflate = "" if self.deflate else ", no deflate"
        messages = ", 2 messages" if self.two_messages else ""
        return f"{tier}, {self.clients} client(s){deflate}{messages}"


def sold_out(n: int, *, web_workers: int, rounds: list[Round], profile: bool = False) -> None:
    """Prepares the room once, then measures each round in turn (one sitting): every round
    on fresh servers and fresh sockets, the room reopened and its units unsold between."""
    from django.contrib.auth import get_user_model

    from bench.waiting_room import prepare
    from waitroom import admission, joining

    flight, room, customers = prepare(n, opens_in=-1, rate=1, max_inside=1, stay=600, rows=2)
    users = get_user_model().objects.in_bulk([c.id for c in customers])
    for customer in customers:
        joining.join_queue(room_id=room.pk, customer=users[customer.id])
    admission.admit_shoppers(room_id=room.pk)  # the shuffle (and 1 admitted)
    rows = []
    for number, config in enumerate(rounds, 1):
        print(f"round {number}: {config}", flush=True)
        rows.append((config, _one_round(n, room, flight, customers, web_workers, config, profile)))
        _reopen(room, flight)
    print("\n| round | serving | heard | within 1 s | p50 | p99 | max | client lag max | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for number, (config, f) in enumerate(rows, 1):
        ms = lambda key, f=f: f"{f[key] * 1000:,.0f} ms" if key in f else "-"  # noqa: E731
        print(
            f"| {number} | {config} | {f['heard']:,} of {f['connected']:,} | {f['within_1s']:,}"
            f" | {ms('p50')} | {ms('p99')} | {ms('max')} | {ms('lag_max')} | {f['load']:.1f} |"
        )


def _one_round(n, room, flight, customers, web_workers: int, config: Round, profile) -> dict:
    from bench.waiting_room import SERVER_ENV, cpu_seconds, free_port

    logs = ROOT / "test-artifacts"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, **SERVER_ENV}
    port = free_port()
    servers = {"web": _uvicorn(port, web_workers, env, logs / "bench-wr-soldout.log", config)}
    ws_port = port
    if config.ws_workers:
        ws_port = free_port()
        log = logs / "bench-wr-soldout-ws.log"
        servers["ws"] = _uvicorn(ws_port, config.ws_workers, env, log, config)
    shares = [customers[i :: config.clients] for i in range(config.clients)]
    listeners = []
    try:
        for p in {port, ws_port}:
            _wait_for(p)
        listeners = [_start_client(ws_port, room.pk, share) for share in shares]
        connected = sum(_read_json(c)["connected"] for c in listeners)
        time.sleep(1)
        named = {**servers, **{f"client {i}": c for i, c in enumerate(listeners)}}
        cpu_before = cpu_seconds(named)
        spies = _spy(servers["ws" if config.ws_workers else "web"], logs) if profile else []
        for c in listeners:
            c.stdin.write("go\n")
            c.stdin.flush()
        step = _sell_out(room, flight, two_messages=config.two_messages)
        heard = [_read_json(c) for c in listeners]
        cpu_after = cpu_seconds(named)
        for spy in spies:
            spy.wait(timeout=60)
    finally:
        # Killed, not stopped: 2,000 sockets closing at once make every worker discard
        # 4,000 group memberships and exhaust its Redis pool (MaxConnectionsError, a
        # traceback per socket), which held a graceful stop for minutes per round.
        _kill([*listeners, *servers.values()])
    serving = config.ws_workers or web_workers
    return _report(n, connected, step, heard, cpu_before, cpu_after, serving)


def _uvicorn(port: int, workers: int, env: dict, log: Path, config: Round) -> subprocess.Popen:
    command = [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--workers", str(workers), "--lifespan", "off"]
    command += ["--log-level", "warning"]
    if not config.deflate:
        command.append("--ws-per-message-deflate=false")
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
    )


def _kill(processes: list[subprocess.Popen]) -> None:
    """SIGKILL to each process and its children (uvicorn's workers), then reaped."""
    import psutil

    for proc in processes:
        try:
            family = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        for p in [*family, proc]:
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                p.kill()
        proc.wait()
        psutil.wait_procs(family, timeout=5)


def _reopen(room, flight) -> None:
    """Back to before the sell-out: units unsold, the queue open, for the next round."""
    from bookings.models import Inventory
    from waitroom.models import WaitingRoom

    Inventory.objects.filter(sale_id=flight.sale_id).update(sold=0, held=0)
    WaitingRoom.objects.filter(pk=room.pk).update(sold_out_at=None)


def _report(n, connected, step, heard, cpu_before, cpu_after, serving) -> dict:
    started = step["started"]
    latencies = sorted(t - started for h in heard for t in h["heard_at"])
    within = sum(1 for x in latencies if x <= 1.0)
    load = os.getloadavg()
    print(
        f"sold-out scenario: {n} waiting, {connected} websockets connected"
        f" ({serving} uvicorn workers serve them, {len(heard)} client processes)"
    )
    print(
        f"  the step: database work to commit {(step['committed'] - started) * 1000:.0f} ms,"
        f" after-commit publish {(step['published'] - step['committed']) * 1000:.0f} ms"
    )
    figures = {"connected": connected, "heard": len(latencies), "within_1s": within}
    figures["lag_max"] = max(h["lag_max"] for h in heard)
    if latencies:
        pick = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))]  # noqa: E731
        figures.update(first=latencies[0], p50=pick(0.5), p99=pick(0.99), max=latencies[-1])
        print(
            f"  heard 'sold out, queue closed': {len(latencies)}; within 1 s: {within}"
            f"  (first {latencies[0] * 1000:.0f} ms, p50 {figures['p50'] * 1000:.0f} ms,"
            f" p99 {figures['p99'] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms,"
            " from the admission step's start)"
        )
    for i, h in enumerate(heard):
        times = sorted(t - started for t in h["heard_at"])
        span = f"{times[0] * 1000:.0f}-{times[-1] * 1000:.0f} ms" if times else "-"
        print(
            f"  client {i}: {h['connected']} sockets, heard {len(times)} ({span}),"
            f" {h['messages']} messages; loop lag p50 {h['lag_p50'] * 1000:.1f} ms,"
            f" max {h['lag_max'] * 1000:.0f} ms"
        )
    cpu = {k: cpu_after.get(k, 0) - v for k, v in cpu_before.items()}
    print(
        "  CPU seconds from 'go' to the end: " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
    )
    print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (a shared machine)")
    figures["load"] = load[0]
    return figures


def _sell_out(room, flight, *, two_messages: bool = False) -> dict:
    """Every unit sold (the bench's own sale: the inventory row is set, not bought), then
    the admission step that sees it, timed: its start, its commit (the start of its
    after-commit publish) and the end of that publish (the admitted, the sell-out, the
    Redis mirror and the move)."""
    from django.db.models import F

    from bookings.models import Inventory
    from waitroom import admission

    Inventory.objects.filter(sale_id=flight.sale_id).update(
        sold=F("capacity") + F("overbook_limit"), held=0
    )
    times: dict[str, float] = {}
    original = admission._publish_tick
    publish = _as_before_3_dec if two_messages else original

    def timed_publish(**kwargs):
        times["committed"] = time.monotonic()
        publish(**kwargs)
        times["published"] = time.monotonic()

    admission._publish_tick = timed_publish
    try:
        times["started"] = time.monotonic()
        step = admission.admit_shoppers(room_id=room.pk)
    finally:
        admission._publish_tick = original
    if "published" not in times or step.skipped:
        raise SystemExit("the admission step did not publish the sell-out")
    return times


def _as_before_3_dec(*, room_id: int, step, broadcast: bool = True) -> None:
    """The step's publish as it was: the sell-out on its own, then the move without it
    (two messages to every page), for a round to compare in the same sitting."""
    from dataclasses import replace

    from waitroom import admission, live, queue, room_selectors

    live.publish_admitted(room_id=room_id, customer_ids=[e.customer_id for e in step.admitted])
    if step.sold_out_now:
        live.publish_sold_out(
            room_id=room_id, stock=room_selectors.stock_facts_of_state(step.state)
        )
    queue.heal(room_id)
    admission._mirror_tick(
        room_id=room_id, step=replace(step, sold_out_now=False), broadcast=broadcast
    )


def _spy(server: subprocess.Popen, logs: Path) -> list[subprocess.Popen]:
    """py-spy on every worker of `server` over the broadcast (flame graphs and raw stacks
    in test-artifacts/bench-wr-soldout-spy-<pid>.*)."""
    import psutil

    spies = []
    for worker in psutil.Process(server.pid).children():
        out = logs / f"bench-wr-soldout-spy-{worker.pid}.txt"
        command = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(worker.pid)]
        command += ["--duration", "3", "--rate", "500", "--format", "raw", "--output", str(out)]
        spies.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    time.sleep(0.5)  # attached
    return spies


def _wait_for(port: int) -> None:
    import httpx

    deadline = (
        time.monotonic() + 180
    )  # a loaded machine has taken over a minute to import and warm up
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise SystemExit("uvicorn did not come up; see test-artifacts/bench-wr-soldout*.log")


def _start_client(port: int, room_id: int, customers) -> subprocess.Popen:
    client = subprocess.Popen(
        [sys.executable, "-m", "bench.waiting_room_sold_out"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    sessions = [c.session for c in customers]
    client.stdin.write(json.dumps({"port": port, "room": room_id, "sessions": sessions}) + "\n")
    client.stdin.flush()
    return client


def _read_json(client: subprocess.Popen) -> dict:
    line = client.stdout.readline()
    if not line:
        raise SystemExit("a sold-out client process died; see its stderr above")
    return json.loads(line)


# --- a client process: its share of the sockets --------------------------------------------


async def _listen(port: int, room_id: int, sessions: list[str]) -> None:
    import websockets

    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    opened = asyncio.Semaphore(48)
    go = asyncio.Event()
    sockets = []
    heard_at: list[float] = []
    messages = 0

    async def connect(session: str):
        async with opened:
            ws = await websockets.connect(
                f"ws://127.0.0.1:{port}/ws/waiting-room/{room_id}/",
                origin=f"http://127.0.0.1:{port}",
                additional_headers={"Cookie": f"sessionid={session}"},
                open_timeout=120,
                ping_interval=None,
                max_queue=None,
            )
            await ws.recv()  # the snapshot: this page is waiting
            sockets.append(ws)

    async def listen(ws) -> None:
        nonlocal messages
        async for raw in ws:
            messages += 1
            if go.is_set() and json.loads(raw).get("queueClosed"):
                heard_at.append(time.monotonic())
                return

    await asyncio.gather(*(connect(s) for s in sessions), return_exceptions=True)
    listening = [asyncio.create_task(listen(ws)) for ws in sockets]
    _say({"connected": len(sockets)})
    await stdin.readline()  # "go"
    go.set()
    lags = []
    ends = time.monotonic() + LISTEN_SECONDS
    while time.monotonic() < ends:
        before = time.monotonic()
        await asyncio.sleep(0.005)
        lags.append(time.monotonic() - before - 0.005)
    for task in listening:
        task.cancel()
    lags.sort()
    _say(
        {
            "connected": len(sockets),
            "heard_at": heard_at,
            "messages": messages,
            "lag_p50": lags[len(lags) // 2],
            "lag_max": lags[-1],
        }
    )


def _say(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def client_main() -> None:
    config = json.loads(sys.stdin.readline())
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(_listen(config["port"], config["room"], config["sessions"]))


if __name__ == "__main__":
    client_main()
