"""A throw-away Redis Cluster on loopback: 3 primaries with 1 replica each.

Six `redis-server --cluster-enabled yes` processes and `redis-cli --cluster create
--cluster-replicas 1`, as production would run it (docs/operations.md).  Without replicas,
losing one primary would stop the whole cluster (`cluster-require-full-coverage`): the
replicas are what the failover test kills a primary for.

Started once per test process on first use (tests/conftest.py `redis_cluster`) and stopped at
its end; never anybody else's Redis.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis
from redis.cluster import ClusterNode, RedisCluster

NODES = 6
# How long a silent primary takes to be declared failed (and its replica promoted).  Short so
# the failover test is quick; production keeps Redis's default (15 s), docs/reliability.md.
NODE_TIMEOUT_MS = 1000


def _free_cluster_port() -> int:
    """A port that is free, and whose cluster bus port (+10000) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


class ThrowAwayCluster:
    def __init__(self, workdir: Path) -> None:
        self.server = shutil.which("redis-server")
        self.cli = shutil.which("redis-cli")
        if not self.server or not self.cli:
            raise RuntimeError("the cluster tests need redis-server and redis-cli (Debian redis)")
        self.workdir = workdir
        self.ports: list[int] = []
        self.procs: dict[int, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        """REDIS_CLUSTER_URL's form: every startup node, comma-separated."""
        return "redis://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def _spawn(self, port: int) -> None:
        self.procs[port] = subprocess.Popen(
            [
                self.server,
                "--port", str(port),
                "--bind", "127.0.0.1",
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(self.workdir / f"nodes-{port}.conf"),
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def start(self) -> None:
        while len(self.ports) < NODES:
            port = _free_cluster_port()
            if port not in self.ports:
                self.ports.append(port)
        for port in self.ports:
            self._spawn(port)
        for port in self.ports:
            _wait_ping(port)
        subprocess.run(
            [self.cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
             "--cluster-replicas", "1", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        self.wait_healthy()

    def wait_healthy(self, timeout: float = 60) -> None:
        """Until every live node says `cluster_state:ok`, 3 primaries own all slots and every
        replica's link to its primary is up (a replica that never synced cannot take over)."""
        deadline = time.monotonic() + timeout
        while True:
            states = []
            for port in self.live_ports():
                try:
                    node = _node(port)
                    info = node.cluster("info")
                    states.append(info.get("cluster_state") == "ok")
                    link = node.info("replication")
                    states.append(
                        link.get("role") == "master" or link["master_link_status"] == "up"
                    )
                except redis.RedisError:
                    states.append(False)
            if states and all(states) and len(self.primaries()) == 3:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster not healthy after {timeout} s")
            time.sleep(0.1)

    def live_ports(self) -> list[int]:
        return [p for p, proc in self.procs.items() if proc.poll() is None]

    def primaries(self) -> dict[int, str]:
        """Port -> node id of each live primary that owns slots, as a live node sees it."""
        for port in self.live_ports():
            try:
                nodes = _node(port).execute_command("CLUSTER", "NODES")
            except redis.RedisError:
                continue
            text = nodes.decode() if isinstance(nodes, bytes) else nodes
            found = {}
            for line in text.splitlines():
                parts = line.split()
                if "master" in parts[2] and "fail" not in parts[2] and len(parts) > 8:
                    found[int(parts[1].split("@")[0].rsplit(":", 1)[1])] = parts[0]
            return found
        return {}

    def primary_of(self, key: str) -> int:
        """The port of the primary that serves `key`'s slot now."""
        client = self.client()
        try:
            node = client.get_node_from_key(key)
            return int(node.port)
        finally:
            client.close()

    def kill(self, port: int) -> None:
        """SIGKILL one node: no goodbye to the others, as a lost machine."""
        proc = self.procs[port]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def restart(self, port: int) -> None:
        """Bring a killed node back (it rejoins from its nodes.conf, as a replica)."""
        self._spawn(port)
        _wait_ping(port)

    def client(self, **options) -> RedisCluster:
        return RedisCluster(
            startup_nodes=[ClusterNode("127.0.0.1", p) for p in self.live_ports()], **options
        )

    def point_settings_at(self, settings) -> None:
        """What REDIS_CLUSTER_URL does in config/settings' parts, on pytest-django's `settings`."""
        settings.REDIS_CLUSTER_URL = self.url
        settings.HOLD_FILTERS = {
            **settings.HOLD_FILTERS,
            "REDIS_URL": self.url,
            "REDIS_CLUSTER": True,
        }
        settings.WAITING_ROOM = {
            **settings.WAITING_ROOM,
            "REDIS_URL": self.url,
            "REDIS_CLUSTER": True,
        }
        settings.CACHES = {
            **settings.CACHES,
            "default": {
                "BACKEND": "kernel.cluster_cache.ClusterCache",
                "LOCATION": self.url,
                "KEY_PREFIX": settings.CACHES["default"].get("KEY_PREFIX", ""),
            },
        }

    def flush(self) -> None:
        for port in self.primaries():
            _node(port).flushall()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        self.procs.clear()


def _node(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=1, socket_connect_timeout=0.5)


def _wait_ping(port: int) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            _node(port).ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
