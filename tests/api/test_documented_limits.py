"""Issue 31, item 18: every limit is written down (README table, schema: 429 with
Retry-After), and the token endpoint is limited per account as well as per address."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from config import settings as project_settings
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RIGHT = "correct-horse-battery"
# The project's own rates (tests/api/conftest.py moves them out of the way in `settings`).
PROJECT_RATES = project_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]


@pytest.fixture
def token_limits(settings, pinned_window):
    # The windows are fixed minutes: a boundary between the requests (CI of 764f36d, at
    # 18:06:00) opens a fresh budget, so the throttles' clock is held mid-minute.
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "auth": "3/min",
            "auth_account": "2/min",
        },
    }


def token(username, address, password=RIGHT):
    return APIClient().post(
        "/api/auth/token",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
    )


def test_one_account_is_limited_from_many_addresses(token_limits):
    UserFactory(username="ana", password=RIGHT)
    answers = [token("ana", f"203.0.113.{n}") for n in range(1, 4)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert int(answers[-1]["Retry-After"]) >= 1
    assert answers[-1]["Content-Type"].startswith("application/problem+json")
    # The name is the account whatever its spelling in the body.
    assert token(" ANA ", "203.0.113.9").status_code == 429


def test_the_per_address_limit_stays_for_many_accounts(token_limits):
    for name in ("bo", "cy", "di", "ed"):
        UserFactory(username=name, password=RIGHT)
    codes = [token(name, "198.51.100.7").status_code for name in ("bo", "cy", "di", "ed")]
    assert codes == [200, 200, 200, 429]
    assert token("ed", "198.51.100.8").status_code == 200  # another address, another budget


def test_the_readme_table_lists_every_api_throttle():
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    table = readme[readme.index("### Limits") :]
    table = table[: table.index("\n\n", table.index("| Limit"))]
    for scope, rate in PROJECT_RATES.items():
        setting = {"auth_account": "_AUTH_ACCOUNT"}.get(scope, f"API_THROTTLE_{scope.upper()}")
        assert setting in table, scope
        assert f"`{rate}`" in table, (scope, rate)
    for limit in ("WAITING_ROOM_JOINS_PER_ACCOUNT", "LOGIN_FAILURE_LIMIT", "SIGNUPS_PER_ADDRESS"):
        assert limit in table


def test_every_limited_operation_documents_429_with_retry_after_and_its_rate(anon, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": PROJECT_RATES}
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    ops = {
        op["operationId"]: op
        for path_ops in schema["paths"].values()
        for op in path_ops.values()
        if isinstance(op, dict) and "operationId" in op
    }
    rates = PROJECT_RATES
    expected = {
        "auth_token_create": [rates["auth"], rates["auth_account"]],
        "bookings_create": [rates["holds"]],
        "bookings_pay": [rates["payments"]],
        "waiting_room_queue_join": [],
    }
    for operation_id, rates_named in expected.items():
        answer = ops[operation_id]["responses"]["429"]
        assert "Retry-After" in answer["headers"], operation_id
        for rate in rates_named:
            assert rate in answer["description"], (operation_id, rate)
    auth_429 = ops["auth_token_create"]["responses"]["429"]["description"]
    assert re.search(r"address.*account", auth_429)
