"""The production shape (docker-compose.yml) and the health endpoints it relies on."""

import configparser
import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


APPLICATION = ("web1", "web2", "ws", "worker", "beat")


def test_compose_describes_the_production_shape():
    services = compose()["services"]
    assert set(services) == {"postgres", "pgbouncer", "redis", "migrate", "nginx", *APPLICATION}
    assert services["postgres"]["image"] == "postgres:16"
    assert services["redis"]["image"] == "redis:7"
    for name in ("postgres", "pgbouncer", "redis", "nginx", *APPLICATION):
        assert services[name]["healthcheck"]["test"], name
    assert services["beat"]["deploy"]["replicas"] == 1
    for name in ("web1", "web2"):  # HTTP: Django's WSGI handler on granian, no websockets
        command = services[name]["command"]
        assert command[0] == "granian" and command[-1] == "config.wsgi:application", name
        assert command[command.index("--interface") + 1] == "wsgi" and "--no-ws" in command
        assert command[command.index("--port") + 1] == "8000", name
        assert "8000" in services[name]["healthcheck"]["test"][-1], name
    ws = services["ws"]["command"]  # the websocket tier: the ASGI application, own port
    assert ws[0] == "uvicorn" and "config.asgi:application" in ws
    assert services["ws"]["command"][services["ws"]["command"].index("--port") + 1] == "8001"
    assert "8001" in services["ws"]["healthcheck"]["test"][-1]
    assert services["worker"]["command"][:4] == ["celery", "-A", "config", "worker"]


GRANIAN_IDLE_CLOSE_MS = 30_000  # granian's --http1-header-read-timeout default


def upstream_keepalive_seconds(config: str) -> float:
    """nginx's idle timeout for kept connections to the web nodes (60 s when unset)."""
    block = re.search(r"upstream seatkeeper_web \{(.*?)\}", config, re.DOTALL).group(1)
    found = re.search(r"^\s*keepalive_timeout\s+(\d+)(ms|s)?;", block, re.MULTILINE)
    if not found:
        return 60.0
    value, unit = int(found.group(1)), found.group(2) or "s"
    return value / 1000 if unit == "ms" else float(value)


def test_nginx_drops_an_idle_upstream_connection_before_the_web_node_does():
    # Else nginx can hand a POST to a connection granian closed a moment before: a 502 that
    # nginx may not repeat (docs/performance.md, "where the open loop's queue forms").
    config = (ROOT / "deploy" / "nginx" / "seatkeeper.conf").read_text()
    for name in ("web1", "web2"):
        command = compose()["services"][name]["command"]
        flag = "--http1-header-read-timeout"
        idle_close = int(command[command.index(flag) + 1]) if flag in command else None
        idle_close_s = (idle_close or GRANIAN_IDLE_CLOSE_MS) / 1000
        assert upstream_keepalive_seconds(config) < idle_close_s, name
    # The control: nginx's own default outlives granian's.
    without = re.sub(r"^\s*keepalive_timeout .*$", "", config, flags=re.MULTILINE)
    assert upstream_keepalive_seconds(without) == 60.0 > GRANIAN_IDLE_CLOSE_MS / 1000


def test_every_process_reaches_postgresql_through_pgbouncer_and_only_migrate_directly():
    services = compose()["services"]
    for name in APPLICATION:
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://seatkeeper:seatkeeper@pgbouncer:6432/")
        assert env["DB_PGBOUNCER"] == "true", name
        assert services[name]["depends_on"]["pgbouncer"]["condition"] == "service_healthy"
    migrate = services["migrate"]["environment"]
    assert "@postgres:5432/" in migrate["DATABASE_URL"] and migrate["DB_PGBOUNCER"] == "false"
    ini = pgbouncer_ini()
    assert ini["pgbouncer"]["pool_mode"] == "transaction"
    assert "ignore_startup_parameters" not in ini["pgbouncer"]  # options refused, not dropped
    assert ini["databases"]["seatkeeper"] == "host=postgres port=5432 dbname=seatkeeper"


def test_only_nginx_is_published_and_the_nodes_trust_only_its_address():
    services = compose()["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"nginx"}
    nginx = services["nginx"]["networks"]["backend"]["ipv4_address"]
    for name in ("web1", "web2", "ws"):  # the application's rule (kernel/web/client_ip.py)
        env = services[name]["environment"]
        trusted = [ipaddress.ip_network(net) for net in env["TRUSTED_PROXIES"].split(",")]
        assert env["NUM_PROXIES"] == "1" and trusted == [ipaddress.ip_network(nginx)], name
    # The websocket tier's uvicorn rewrites its scopes' client from the same one peer; the
    # HTTP nodes' granian rewrites nothing, so REMOTE_ADDR stays nginx's for the app's rule.
    ws = services["ws"]["command"]
    assert ws[ws.index("--forwarded-allow-ips") + 1] == nginx
    for name in ("web1", "web2"):
        assert not any("forward" in part or "proxy" in part for part in services[name]["command"])


def pgbouncer_ini() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.read_string((ROOT / "deploy" / "pgbouncer" / "pgbouncer.ini").read_text())
    return parser


def local_pgbouncer_ini(tmp_path: Path, *, port: int, server: str, database: str) -> str:
    """deploy/pgbouncer/pgbouncer.ini with only the addresses and paths made local."""
    host, server_port = server.rsplit(":", 1)
    text = (ROOT / "deploy" / "pgbouncer" / "pgbouncer.ini").read_text()
    replacements = {
        "seatkeeper = host=postgres port=5432 dbname=seatkeeper": (
            f"seatkeeper = host={host} port={server_port} dbname={database}"
        ),
        "listen_addr = 0.0.0.0": "listen_addr = 127.0.0.1",
        "listen_port = 6432": f"listen_port = {port}",
        "auth_file = /etc/pgbouncer/userlist.txt": f"auth_file = {tmp_path / 'userlist.txt'}",
        "logfile =": f"logfile = {tmp_path / 'pgbouncer.log'}",
    }
    for old, new in replacements.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.mark.django_db(transaction=True)
def test_the_compose_pgbouncer_runs_and_passes_its_healthcheck():
    """The committed pgbouncer.ini and userlist (SCRAM), started as compose starts it, but as
    the cluster's user on loopback, in front of the test database; then its healthcheck."""
    from django.db import connection

    from tests.project.test_pgbouncer import run_tests

    with connection.cursor() as cursor:  # the compose role, as the postgres image creates it
        cursor.execute("CREATE ROLE seatkeeper LOGIN PASSWORD 'seatkeeper'")
    # Not pytest's tmp_path: its parents are root's alone, and PgBouncer runs as the cluster's.
    tmp_path = Path(tempfile.mkdtemp(prefix="seatkeeper-compose-pgbouncer-"))
    direct = urlsplit(os.environ["DATABASE_URL"])
    port = run_tests.free_port()
    (tmp_path / "pgbouncer.ini").write_text(
        local_pgbouncer_ini(
            tmp_path,
            port=port,
            server=f"{direct.hostname}:{direct.port}",
            database=connection.settings_dict["NAME"],
        )
    )
    shutil.copy(ROOT / "deploy" / "pgbouncer" / "userlist.txt", tmp_path / "userlist.txt")
    as_user = run_tests._as_postgres_user()
    if as_user:
        for path in (tmp_path, *tmp_path.iterdir()):
            shutil.chown(path, user="postgres", group="postgres")
    command = compose()["services"]["pgbouncer"]["command"]
    assert command == ["pgbouncer", "/etc/pgbouncer/pgbouncer.ini"]
    process = subprocess.Popen(
        [*as_user, run_tests.pgbouncer_binary(), str(tmp_path / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while not run_tests.port_open("127.0.0.1", port):
            assert process.poll() is None and time.monotonic() < deadline, (
                tmp_path / "pgbouncer.log"
            ).read_text()
            time.sleep(0.05)
        check = compose()["services"]["pgbouncer"]["healthcheck"]["test"][1:]
        check[check.index("-p") + 1] = str(port)
        healthy = subprocess.run(check, capture_output=True, text=True)
        assert healthy.returncode == 0, healthy.stdout + healthy.stderr
        with psycopg.connect(
            host="127.0.0.1", port=port, user="seatkeeper", password="seatkeeper",
            dbname="seatkeeper", prepare_threshold=None,
        ) as conn:  # fmt: skip
            assert conn.execute("SELECT current_user, 6 * 7").fetchone() == ("seatkeeper", 42)
            assert conn.info.port == port  # through the pooler
        with pytest.raises(psycopg.OperationalError, match="authentication failed"):
            psycopg.connect(
                host="127.0.0.1",
                port=port,
                user="seatkeeper",
                password="wrong",
                dbname="seatkeeper",
            )
    finally:
        process.terminate()
        process.wait(timeout=10)
        with connection.cursor() as cursor:
            cursor.execute("DROP ROLE seatkeeper")
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_compose_file_is_accepted_by_docker_compose():
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.fail("docker-compose is not installed (./scripts/test installs Debian's, as root)")
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": "x" * 50,
        "TICKET_SIGNING_KEY": "y" * 50,
        "PARTNER_SECRETS_KEY": "z" * 50,
        "PAYMENTS_GATEWAY": "stripe",
    }
    result = subprocess.run(
        [binary, "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.django_db
def test_healthz_answers_when_the_database_does(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_beat_healthcheck_fails_without_recent_runs():
    from django.utils import timezone
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    with pytest.raises(CommandError):
        call_command("beat_healthcheck")
    every = IntervalSchedule.objects.create(every=30, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(name="probe", task="x", interval=every, last_run_at=timezone.now())
    call_command("beat_healthcheck")
