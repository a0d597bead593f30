"""Issue 11, items 1 and 8: a production configuration (DEBUG off) refuses to start on
repository secrets or on the sandbox gateway without the demo opt-in, and passes Django's
`check --deploy` without a warning when configured as docs/security.md says."""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.checks import run_checks

ROOT = Path(__file__).resolve().parents[2]


def ours(**kwargs) -> set[str]:
    return {m.id for m in run_checks(**kwargs) if m.id and m.id.startswith("seatkeeper.")}


def messages(**kwargs) -> str:
    return "\n".join(m.msg for m in run_checks(**kwargs) if m.id.startswith("seatkeeper."))


def strong() -> str:
    return secrets.token_urlsafe(48)


@pytest.fixture
def production(settings):
    """Settings as a correct Stripe production deployment has them."""
    settings.DEBUG = False
    settings.SECRET_KEY = strong()
    settings.TICKET_SIGNING_KEYS = {"k1": strong()}
    settings.TICKET_SIGNING_KEY_ID = "k1"
    settings.PARTNER_SECRETS_KEY = strong()
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "stripe", "SANDBOX_IN_PRODUCTION": False}
    settings.STRIPE = {
        **settings.STRIPE,
        "API_KEY": "sk_live_" + strong(),
        "WEBHOOK_SECRET": "whsec_" + strong(),
    }
    return settings


def test_a_correct_production_configuration_passes(production):
    assert ours() == set()


def test_the_repository_defaults_are_refused_with_debug_off(settings):
    """The test settings are the repository defaults: sandbox, dev key, dev webhook secret."""
    settings.DEBUG = False
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "WEBHOOK_SECRET": settings.DEV_SANDBOX_WEBHOOK_SECRET,
    }
    assert settings.SECRET_KEY == settings.DEV_SECRET_KEY
    assert ours() == {"seatkeeper.E001", "seatkeeper.E002"}
    text = messages()
    for name in ("DJANGO_SECRET_KEY", "TICKET_SIGNING_KEY", "SANDBOX_WEBHOOK_SECRET"):
        assert f"{name} is not a production secret" in text
    settings.DEBUG = True
    assert ours() == set()  # development stays quiet


def test_the_sandbox_needs_the_explicit_opt_in(production):
    production.PAYMENTS = {**production.PAYMENTS, "GATEWAY": "sandbox"}
    production.PAYMENTS_SANDBOX = {**production.PAYMENTS_SANDBOX, "WEBHOOK_SECRET": strong()}
    assert ours() == {"seatkeeper.E002"}
    production.PAYMENTS = {**production.PAYMENTS, "SANDBOX_IN_PRODUCTION": True}
    assert ours() == set()
    # The opt-in does not excuse the repository's webhook secret.
    production.PAYMENTS_SANDBOX = {
        **production.PAYMENTS_SANDBOX,
        "WEBHOOK_SECRET": "whsec_sandbox_local_only",
    }
    assert "SANDBOX_WEBHOOK_SECRET is not a production secret" in messages()


@pytest.mark.parametrize(
    "change, name",
    [
        (lambda s: setattr(s, "SECRET_KEY", s.DEV_SECRET_KEY), "DJANGO_SECRET_KEY"),
        (
            lambda s: setattr(s, "SECRET_KEY", "django-insecure-" + "x1y2z3" * 10),
            "DJANGO_SECRET_KEY",
        ),
        (lambda s: setattr(s, "SECRET_KEY", "short"), "DJANGO_SECRET_KEY"),
        (
            lambda s: setattr(s, "TICKET_SIGNING_KEYS", {"k1": f"ticket-signing:{s.SECRET_KEY}"}),
            "TICKET_SIGNING_KEY",
        ),
        (
            lambda s: setattr(s, "PARTNER_SECRETS_KEY", f"partner-secrets:{s.SECRET_KEY}"),
            "PARTNER_SECRETS_KEY",
        ),
        (
            lambda s: setattr(s, "PARTNER_SECRETS_KEY", s.DEV_PARTNER_SECRETS_KEY),
            "PARTNER_SECRETS_KEY",
        ),
        (
            lambda s: setattr(s, "TICKET_SIGNING_KEYS", {"k1": strong(), "k0": "a" * 40}),
            "TICKET_SIGNING_OLD_KEYS[k0]",
        ),
        (
            lambda s: setattr(s, "STRIPE", {**s.STRIPE, "WEBHOOK_SECRET": ""}),
            "STRIPE_WEBHOOK_SECRET",
        ),
        (
            lambda s: setattr(s, "STRIPE", {**s.STRIPE, "WEBHOOK_SECRET": "whsec_test_secret"}),
            "STRIPE_WEBHOOK_SECRET",
        ),
        (lambda s: setattr(s, "STRIPE", {**s.STRIPE, "API_KEY": ""}), "STRIPE_API_KEY"),
    ],
)
def test_every_secret_is_checked(production, change, name):
    change(production)
    assert ours() == {"seatkeeper.E001"}
    assert f"{name} is not a production secret" in messages()


# --- the real commands, in a fresh process ----------------------------------------------------


def clean_env(tmp_path, **extra: str) -> dict[str, str]:
    """The parent's environment without the test suite's opt-outs and services."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "PAYMENTS_", "SANDBOX_", "STRIPE_", "TICKET_"))
        and k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        **extra,
    )
    return env


def manage(env, *args):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION_ENV = {
    "DJANGO_DEBUG": "false",
    "DJANGO_ALLOWED_HOSTS": "seatkeeper.example",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "PAYMENTS_GATEWAY": "stripe",
}


def test_migrate_refuses_to_run_on_repository_defaults(tmp_path):
    result = manage(clean_env(tmp_path, DJANGO_DEBUG="false"), "migrate", "--noinput")
    assert result.returncode != 0
    assert "seatkeeper.E001" in result.stderr and "seatkeeper.E002" in result.stderr
    database = tmp_path / "db.sqlite3"
    if database.exists():
        with sqlite3.connect(database) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "bookings_booking" not in tables  # nothing was migrated


def test_check_deploy_passes_with_production_settings(tmp_path):
    env = clean_env(
        tmp_path,
        **PRODUCTION_ENV,
        DJANGO_SECRET_KEY=strong(),
        TICKET_SIGNING_KEY=strong(),
        PARTNER_SECRETS_KEY=strong(),
        STRIPE_API_KEY="sk_live_" + strong(),
        STRIPE_WEBHOOK_SECRET="whsec_" + strong(),
    )
    result = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stderr + result.stdout
    # Control: the same with the development key is flagged by Django's own deploy check too.
    env["DJANGO_SECRET_KEY"] = "django-insecure-" + strong()
    flagged = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert flagged.returncode != 0 and "security.W009" in flagged.stderr


def test_https_defaults_follow_debug(tmp_path):
    script = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SESSION_COOKIE_SECURE,"
        " s.CSRF_COOKIE_SECURE, s.SECURE_PROXY_SSL_HEADER, s.SECRET_KEY[:16]]))"
    )

    def read(**env):
        out = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=clean_env(tmp_path, **env),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return yaml.safe_load(out.stdout.strip().splitlines()[-1])

    assert read(
        DJANGO_DEBUG="false", DJANGO_SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https"
    ) == [True, 31536000, True, True, ["HTTP_X_FORWARDED_PROTO", "https"], "django-insecure-"]
    assert read(DJANGO_DEBUG="true") == [False, 0, False, False, None, "django-insecure-"]
    assert read(DJANGO_DEBUG="false", DJANGO_SECURE_SSL_REDIRECT="false")[0] is False


# --- docker-compose: secrets from the environment, never defaults ------------------------------


def test_compose_requires_every_secret_and_does_not_opt_into_the_sandbox():
    text = (ROOT / "docker-compose.yml").read_text()
    app = yaml.safe_load(text)["x-app"]["environment"]
    for name in (
        "DJANGO_SECRET_KEY",
        "TICKET_SIGNING_KEY",
        "PARTNER_SECRETS_KEY",
        "PAYMENTS_GATEWAY",
    ):
        assert app[name].startswith(f"${{{name}:?"), name
    assert app["PAYMENTS_SANDBOX_IN_PRODUCTION"] == "${PAYMENTS_SANDBOX_IN_PRODUCTION:-false}"
    for name in ("SANDBOX_WEBHOOK_SECRET", "STRIPE_WEBHOOK_SECRET", "STRIPE_API_KEY"):
        assert app[name] == f"${{{name}:-}}", name  # empty unless given: the checks refuse it
    assert "DJANGO_DEBUG" not in app
    assert "whsec_" not in text and "django-insecure" not in text


def test_docker_compose_refuses_to_render_without_the_secrets(tmp_path):
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.fail("docker-compose is not installed (./scripts/test installs Debian's, as root)")
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "TICKET_", "PAYMENTS_"))
    }
    run = lambda env: subprocess.run(  # noqa: E731
        [binary, "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    missing = run({**base, "DJANGO_SECRET_KEY": "x" * 50})
    assert missing.returncode != 0 and "TICKET_SIGNING_KEY" in missing.stderr
    complete = run(
        {
            **base,
            "DJANGO_SECRET_KEY": "x" * 50,
            "TICKET_SIGNING_KEY": "y" * 50,
            "PARTNER_SECRETS_KEY": "z" * 50,
            "PAYMENTS_GATEWAY": "stripe",
        }
    )
    assert complete.returncode == 0, complete.stderr


@pytest.mark.django_db
def test_ssl_redirect_spares_only_the_health_probe_and_webhooks(settings):
    from django.test import Client

    settings.SECURE_SSL_REDIRECT = True  # as with DEBUG off (the test suite switches it off)
    client = Client()
    page = client.get("/")
    assert page.status_code == 301 and page["Location"].startswith("https://")
    assert client.get("/healthz").status_code != 301
    webhook = client.post("/api/payments/webhook", b"{}", content_type="application/json")
    assert webhook.status_code == 400  # unsigned, but answered, not redirected
    # Behind the TLS proxy the same page is served.
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert Client().get("/", HTTP_X_FORWARDED_PROTO="https").status_code == 200
