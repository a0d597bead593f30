"""The production shape (docker-compose.yml) and the health endpoints it relies on."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_describes_the_production_shape():
    services = compose()["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "ws", "worker", "beat"}
    assert services["postgres"]["image"] == "postgres:16"
    assert services["redis"]["image"] == "redis:7"
    for name in ("postgres", "redis", "web", "ws", "worker", "beat"):
        assert services[name]["healthcheck"]["test"], name
    assert services["beat"]["deploy"]["replicas"] == 1
    for name in ("web", "ws"):  # the websocket tier is the same application on its own port
        command = services[name]["command"]
        assert "uvicorn" in command and "config.asgi:application" in command, name
    assert services["ws"]["command"][services["ws"]["command"].index("--port") + 1] == "8001"
    assert "8001" in services["ws"]["healthcheck"]["test"][-1]
    assert services["worker"]["command"][:4] == ["celery", "-A", "config", "worker"]


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
