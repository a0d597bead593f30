"""Several web nodes behind a real nginx (Debian's), configured by the committed
deploy/nginx/seatkeeper.conf, on loopback (issue 27).

Two web nodes (granian, WSGI) and the ws node (uvicorn) are started with docker-compose.yml's
own commands (only the addresses made local, one process each), nginx with the committed site
config inside a main config of the test's own (its pid, logs and temp paths in a temp dir, as
the cluster's user when run as root).  On loopback nginx gets its own source address,
127.0.0.2 (`proxy_bind`), so trusting nginx does not also trust the test client on 127.0.0.1.

What a node believes the client's address is, is read through /metrics: it answers only a
client address in METRICS_ALLOWED_IPS (127.0.0.1 here), by kernel/web/client_ip.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml
from websockets.sync.client import connect as ws_connect

from tests.pgbouncer import database_env
from tests.project.test_pgbouncer import run_tests

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("proxy")]

ROOT = Path(__file__).resolve().parents[2]
NGINX = "127.0.0.2"  # nginx's own source address on loopback
CLIENT, STRANGER = "127.0.0.1", "127.0.0.3"  # the test's clients
NODE_ENV = {
    "NUM_PROXIES": "1",
    "TRUSTED_PROXIES": f"{NGINX}/32",
    "METRICS_ENABLED": "true",
    "METRICS_ALLOWED_IPS": f"{CLIENT}/32",
    "DJANGO_DEBUG": "false",
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
}


def services() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


@dataclass
class Node:
    name: str
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


def local_command(service: str, port: int, forwarded_allow_ips: str | None) -> list[str]:
    """The compose service's command (granian for HTTP, uvicorn for websockets), on
    loopback, one worker process.  `forwarded_allow_ips` is uvicorn's (the ws tier's);
    granian has no such flag: its nodes leave the client address to the app's rule."""
    command = list(services()[service]["command"])
    values = {"--host": "127.0.0.1", "--port": str(port), "--workers": "1"}
    for flag, value in values.items():
        command[command.index(flag) + 1] = value
    if command[0] == "granian":
        assert command[-1] == "config.wsgi:application", command
        assert forwarded_allow_ips is None, "granian trusts no sender itself"
        return [sys.executable, "-m", *command]
    assert command[:2] == ["uvicorn", "config.asgi:application"], command
    allow = command.index("--forwarded-allow-ips")
    if forwarded_allow_ips is None:  # uvicorn's default (127.0.0.1)
        del command[allow : allow + 2]
    else:
        command[allow + 1] = forwarded_allow_ips
    return [sys.executable, "-m", *command]


def start_node(name: str, service: str, tmp: Path, *, env: dict, allow: str | None) -> Node:
    port = run_tests.free_port()
    log = tmp / f"{name}.log"
    process = subprocess.Popen(
        local_command(service, port, allow),
        cwd=ROOT,
        env={**os.environ, **database_env(), **env},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    return Node(name, port, process, log)


def wait_until_healthy(node: Node, service: str) -> None:
    """The compose healthcheck of `service`, pointed at the node's port, until it passes."""
    check = list(services()[service]["healthcheck"]["test"][1:])
    check = [part.replace(":8000/", f":{node.port}/").replace(":8001/", f":{node.port}/")
             for part in check]  # fmt: skip
    check[0] = sys.executable if check[0] == "python" else check[0]
    # Four processes import Django and warm up at once on a shared 2-core machine.
    deadline = time.monotonic() + 240
    while subprocess.run(check, capture_output=True).returncode != 0:
        assert node.process.poll() is None, node.log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"{node.name} not healthy: {node.log.read_text()}"
        time.sleep(0.3)


def site_config(*, web: list[Node], ws: Node, port: int) -> str:
    """deploy/nginx/seatkeeper.conf with only the addresses made local."""
    text = (ROOT / "deploy" / "nginx" / "seatkeeper.conf").read_text()
    replacements = {
        "server web1:8000 ": f"server {web[0].address} ",
        "server web2:8000 ": f"server {web[1].address} ",
        "server ws:8001;": f"server {ws.address};",
        "listen 80;": f"listen 127.0.0.1:{port};",
    }
    for old, new in replacements.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def main_config(tmp: Path) -> str:
    """What the image's /etc/nginx/nginx.conf is, with every path under `tmp`; and the
    loopback source address, and an access log that names the node that answered."""
    temp = "\n".join(
        f"    {kind}_temp_path {tmp / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    return f"""pid {tmp / "nginx.pid"};
error_log {tmp / "error.log"} info;
worker_processes 1;
events {{ worker_connections 512; }}
http {{
{temp}
    uwsgi_temp_path {tmp / "uwsgi"};
    scgi_temp_path {tmp / "scgi"};
    log_format upstreams '$remote_addr "$request" $status $upstream_addr';
    access_log {tmp / "access.log"} upstreams;
    proxy_bind {NGINX};
    include {tmp / "seatkeeper.conf"};
}}
"""


@dataclass
class Stack:
    url: str
    port: int
    web: list[Node]
    ws: Node
    credulous: Node  # the control: trusts X-Forwarded-For from anyone
    access_log: Path

    def served_by(self, path: str) -> list[str]:
        """The upstream address of every logged request for `path`."""
        pattern = re.compile(rf'"GET {re.escape(path)} HTTP/1\.1" (\d+) (\S+)$')
        return [m.group(2) for line in self.access_log.read_text().splitlines()
                if (m := pattern.search(line))]  # fmt: skip


@pytest.fixture(scope="module")
def stack(django_db_setup):
    # Not pytest's tmp_path: its parents are root's alone, and nginx runs as the cluster's user.
    tmp = Path(tempfile.mkdtemp(prefix="seatkeeper-nginx-"))
    nodes = [
        start_node("web1", "web1", tmp, env=NODE_ENV, allow=None),
        start_node("web2", "web2", tmp, env=NODE_ENV, allow=None),
        start_node("ws", "ws", tmp, env=NODE_ENV, allow=NGINX),
        start_node("credulous", "web1", tmp, env={**NODE_ENV, "TRUSTED_PROXIES": ""}, allow=None),
    ]
    nginx = None
    try:
        for node, service in zip(nodes, ("web1", "web2", "ws", "web1"), strict=True):
            wait_until_healthy(node, service)
        port = run_tests.free_port()
        (tmp / "seatkeeper.conf").write_text(site_config(web=nodes[:2], ws=nodes[2], port=port))
        (tmp / "nginx.conf").write_text(main_config(tmp))
        as_user = run_tests._as_postgres_user()
        if as_user:
            shutil.chown(tmp, user="postgres", group="postgres")
            for path in tmp.iterdir():
                shutil.chown(path, user="postgres", group="postgres")
        compose_command = services()["nginx"]["command"]
        assert compose_command == ["nginx", "-g", "daemon off;"]
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        nginx = subprocess.Popen(
            [*as_user, binary, *compose_command[1:], "-p", str(tmp), "-c", str(tmp / "nginx.conf"),
             "-e", str(tmp / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=(tmp / "nginx.stderr").open("w"),
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while not run_tests.port_open("127.0.0.1", port):
            assert nginx.poll() is None, (tmp / "nginx.stderr").read_text()
            assert time.monotonic() < deadline, (tmp / "error.log").read_text()
            time.sleep(0.05)
        yield Stack(f"http://127.0.0.1:{port}", port, nodes[:2], nodes[2], nodes[3],
                    tmp / "access.log")  # fmt: skip
    finally:
        for process in ([nginx] if nginx else []) + [n.process for n in nodes]:
            process.terminate()
        for process in ([nginx] if nginx else []) + [n.process for n in nodes]:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def get(url: str, *, source: str = CLIENT, **headers: str) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=30) as client:
        return client.get(url, headers=headers)


# --- routing -----------------------------------------------------------------------------


def test_http_goes_to_both_web_nodes_and_never_to_the_ws_node(stack):
    for _ in range(8):
        assert get(f"{stack.url}/healthz").status_code == 200
    served = stack.served_by("/healthz")
    assert set(served) == {node.address for node in stack.web}, served


def test_the_compose_nginx_healthcheck_passes(stack):
    check = list(services()["nginx"]["healthcheck"]["test"][1:])
    check = [part.replace("127.0.0.1:80/", f"127.0.0.1:{stack.port}/") for part in check]
    result = subprocess.run(check, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_websockets_under_ws_go_to_the_ws_node(stack, flight):
    path = f"/ws/flights/{flight.pk}/seats/"
    origin = f"http://127.0.0.1:{stack.port}"  # the page's own origin, Host with its port
    with ws_connect(f"ws://127.0.0.1:{stack.port}{path}", origin=origin, open_timeout=30) as ws:
        ws.ping().wait(10)
    pattern = re.compile(rf'"GET {re.escape(path)} HTTP/1\.1" 101 (\S+)$')
    served = [m.group(1) for line in stack.access_log.read_text().splitlines()
              if (m := pattern.search(line))]  # fmt: skip
    assert served == [stack.ws.address]


# --- client addresses ----------------------------------------------------------------------


def test_a_node_behind_nginx_sees_the_clients_address_not_nginxs(stack):
    # METRICS_ALLOWED_IPS is the client's 127.0.0.1: nginx's 127.0.0.2 would be refused.
    response = get(f"{stack.url}/metrics")
    assert response.status_code == 200 and "seatkeeper_" in response.text


def test_a_forged_x_forwarded_for_through_nginx_is_not_believed(stack):
    """The stranger on 127.0.0.3 claims to be the allowed 127.0.0.1; nginx appends the real
    address, and the node reads only that one."""
    response = get(f"{stack.url}/metrics", source=STRANGER, **{"X-Forwarded-For": CLIENT})
    assert response.status_code == 403
    assert get(f"{stack.url}/metrics", source=STRANGER).status_code == 403  # plainly, too


def test_a_forged_x_forwarded_for_straight_to_a_node_is_not_believed(stack):
    """X-Forwarded-For counts only on a connection from nginx (TRUSTED_PROXIES, the app's
    rule: granian passes the connection's address through); the stranger connecting to a
    node itself is just the stranger."""
    node = f"http://{stack.web[0].address}"
    response = get(f"{node}/metrics", source=STRANGER, **{"X-Forwarded-For": CLIENT})
    assert response.status_code == 403


def test_control_a_node_that_trusts_every_sender_believes_the_forgery(stack):
    """The same node with TRUSTED_PROXIES empty (the app's rule then believes any sender):
    the stranger's forged header makes it the allowed client."""
    node = f"http://{stack.credulous.address}"
    response = get(f"{node}/metrics", source=STRANGER, **{"X-Forwarded-For": CLIENT})
    assert response.status_code == 200
