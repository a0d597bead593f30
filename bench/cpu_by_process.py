"""CPU per process of the flash-sale stack while bench/flash_sale.py runs, per order.

    python3 bench/cpu_by_process.py sample --checkout /work/wt/x --database DB --out s.json &
    flock /work/wt/bench.lock .venv/bin/python bench/flash_sale.py --quick --no-pgbench \\
        --scenarios c --hold-requests 1000 --checkout /work/wt/x --records /tmp/rec ...
    python3 bench/cpu_by_process.py report s.json /tmp/rec/orders-HHMMSS.json

`sample` reads, every 0.2 s, the utime + stime (/proc/<pid>/stat) of every process of the
stack started from CHECKOUT (granian and its workers `web`, the Celery worker and its pool
`worker`, `beat`, `ws`), of the load generator, of every PostgreSQL backend of DATABASE,
named after the process holding the client end of its socket (`pg:web`, `pg:worker`...), of
the server's own background processes and Redis (shared with anything else on the machine),
and the machine's busy CPU (/proc/stat).  It stops when bench/flash_sale.py exits.

`report` takes the window orders/s is measured over, from the first request to the last win
(flash_sale.py --records), interpolates each process's CPU at both ends, and prints CPU per
group: ms, ms per win, cores; and how many losers started before the last win, which share
the CPU with the last orders and move orders/s from run to run (docs/performance.md, "Issue
26: the order's CPU by process").  Linux only; run it as a user who may read the stack's
/proc entries.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
# The stack's processes, by their command line, and what they are called here.
ROOTS = (
    ("granian", "web"),
    ("celery -A config worker", "worker"),
    ("celery -A config beat", "beat"),
    ("uvicorn", "ws"),
)
BACKEND = re.compile(r"postgres: (?:[\w.]+/\w+: )?\S+ (\S+) 127\.0\.0\.1\((\d+)\)")
PG_OWN = re.compile(r"^postgres: (?:[\w.]+/\w+: )?(checkpointer|background writer|walwriter)")


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _stat(pid: int) -> list[str] | None:
    raw = _read(f"/proc/{pid}/stat")
    return raw.rsplit(")", 1)[1].split() if raw else None


def _cpu(pid: int) -> float | None:
    fields = _stat(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / TICK


def _cmdline(pid: int) -> str:
    return _read(f"/proc/{pid}/cmdline").replace("\0", " ").strip()


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                found.add(link[8:-1])
    except OSError:
        pass
    return found


def _inode_of_port(port: int) -> str | None:
    for line in _read("/proc/net/tcp").splitlines()[1:]:
        parts = line.split()
        if int(parts[1].split(":")[1], 16) == port:
            return parts[9]
    return None


def _machine_busy() -> float:
    values = [int(x) for x in _read("/proc/stat").splitlines()[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / TICK


class Sampler:
    def __init__(self, checkout: str, database: str, bench_cwd: str) -> None:
        self.checkout, self.database, self.bench_cwd = checkout, database, bench_cwd
        self.group: dict[int, str] = {}
        self.roots: dict[int, str] = {}
        self.members: dict[str, set[int]] = defaultdict(set)
        self.backend_tries: dict[int, int] = {}
        self.bench: int | None = None

    def _classify_backend(self, pid: int, port: int) -> None:
        inode = _inode_of_port(port)
        owner = next(
            (
                name
                for name, pids in self.members.items()
                for member in pids
                if inode and inode in _socket_inodes(member)
            ),
            None,
        )
        tries = self.backend_tries[pid] = self.backend_tries.get(pid, 0) + 1
        if owner or tries > 20:  # the bench's own connection (fixtures, audit) stays `other`
            self.group[pid] = f"pg:{owner or 'other'}"

    def classify(self) -> None:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        for pid in pids:
            if pid in self.group:
                continue
            cmd = _cmdline(pid)
            if not cmd:
                continue
            if (
                self.bench is None
                and "bench/flash_sale.py" in cmd
                and "flock" not in cmd
                and _cwd(pid) == self.bench_cwd  # not another worktree's bench
            ):
                self.bench = pid
            if "flash_sale_load.py" in cmd:
                self.group[pid] = "loadgen"
            elif cmd.split(" ")[0].endswith("redis-server"):
                self.group[pid] = "redis"
            elif PG_OWN.search(cmd):
                self.group[pid] = "pg:server"
            elif match := BACKEND.search(cmd):
                if match.group(1) == self.database:
                    self._classify_backend(pid, int(match.group(2)))
            else:
                for needle, name in ROOTS:
                    if needle in cmd and _cwd(pid) == self.checkout:
                        self.roots[pid] = name
        for pid in pids:  # children take their root's name (granian's workers, the pool)
            if pid in self.group:
                continue
            parent, hops = pid, 0
            while parent > 1 and hops < 6:
                if parent in self.roots:
                    self.group[pid] = self.roots[parent]
                    self.members[self.roots[parent]].add(pid)
                    break
                fields = _stat(parent)
                parent, hops = (int(fields[1]) if fields else 0), hops + 1

    def run(self, out: Path, *, interval: float = 0.2) -> None:
        samples, classified = [], 0.0
        while True:
            now = time.monotonic()
            if now - classified > 0.5:
                self.classify()
                classified = now
            cpu = {pid: c for pid in list(self.group) if (c := _cpu(pid)) is not None}
            samples.append({"t": now, "cpu": cpu, "machine": _machine_busy()})
            if self.bench is not None and not os.path.exists(f"/proc/{self.bench}"):
                break
            time.sleep(interval)
        out.write_text(json.dumps({"groups": self.group, "samples": samples}))


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def report(samples_path: Path, records_path: Path) -> None:
    data = json.loads(samples_path.read_text())
    groups = {int(pid): name for pid, name in data["groups"].items()}
    samples = data["samples"]
    records = json.loads(records_path.read_text())
    start = min(r[0] for r in records)
    last_win = max(r[0] + r[1] for r in records if r[3])
    wins = sum(1 for r in records if r[3])
    losers = sum(1 for r in records if not r[3] and r[0] < last_win)
    times = [s["t"] for s in samples]

    def at(t: float) -> tuple[dict[str, float], float]:
        i = min(max(bisect.bisect_left(times, t), 1), len(samples) - 1)
        a, b = samples[i - 1], samples[i]
        f = (t - a["t"]) / (b["t"] - a["t"]) if b["t"] > a["t"] else 0.0
        cpu = {}
        for pid in set(a["cpu"]) | set(b["cpu"]):
            ca, cb = a["cpu"].get(pid), b["cpu"].get(pid)
            ca = ca if ca is not None else 0.0  # born in between: all of its CPU
            cb = cb if cb is not None else ca
            cpu[pid] = ca + f * (cb - ca)
        return cpu, a["machine"] + f * (b["machine"] - a["machine"])

    (cpu0, busy0), (cpu1, busy1) = at(start), at(last_win)
    per: dict[str, float] = defaultdict(float)
    for pid, seconds in cpu1.items():
        per[groups.get(int(pid), "?")] += seconds - cpu0.get(pid, 0.0)
    wall = last_win - start
    print(
        f"first request -> last win {wall:.2f} s: {wins} wins, {wins / wall:.1f}/s; "
        f"{losers} losers started before the last win; machine busy "
        f"{(busy1 - busy0) / wall:.2f} cores"
    )
    total = 0.0
    for name, seconds in sorted(per.items(), key=lambda kv: -kv[1]):
        if seconds < 0.0005:
            continue
        total += seconds
        print(
            f"  {name:12} {seconds * 1000:7.0f} ms  {seconds * 1000 / wins:6.2f} ms/win  "
            f"{seconds / wall:5.2f} cores"
        )
    print(f"  {'sampled':12} {total * 1000:7.0f} ms  {total * 1000 / wins:6.2f} ms/win")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sample = sub.add_parser("sample")
    sample.add_argument("--checkout", type=Path, required=True)
    sample.add_argument("--database", required=True, help="the bench database's name")
    sample.add_argument("--out", type=Path, required=True)
    sample.add_argument(
        "--bench-cwd",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="where bench/flash_sale.py runs from (this repository): it stops with it",
    )
    rep = sub.add_parser("report")
    rep.add_argument("samples", type=Path)
    rep.add_argument("records", type=Path)
    args = parser.parse_args()
    if args.command == "sample":
        Sampler(str(args.checkout.resolve()), args.database, str(args.bench_cwd.resolve())).run(
            args.out
        )
    else:
        report(args.samples, args.records)


if __name__ == "__main__":
    main()
