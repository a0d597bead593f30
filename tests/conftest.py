import asyncio
import os
from collections import defaultdict

import pytest
from django.conf import settings
from django.utils import translation

from tests import pgbouncer
from tests.factories import FlightFactory, StaffFactory, UserFactory


def pytest_configure(config):
    if not settings.USES_POSTGRES:
        raise pytest.UsageError(
            "Seatkeeper's tests run on real PostgreSQL: use ./scripts/test or set DATABASE_URL."
        )
    # Factories hash a password per user; PBKDF2 would make a 200-customer test take minutes.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Tests speak plain HTTP to 127.0.0.1 (test client, live servers, uvicorn subprocesses),
    # so the HTTPS-only defaults of DEBUG=False are switched off here and for child processes.
    # tests/project/test_security_settings.py checks those defaults without this opt-out.
    for name in ("DJANGO_SECURE_SSL_REDIRECT", "DJANGO_SECURE_COOKIES"):
        os.environ[name] = "false"
    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    # Holds write their sale's health signal at once, not from a timer a second later that
    # would outlive the test (tests/waitroom/test_health_batching.py tests the timer).
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "HEALTH_FLUSH_SECONDS": 0}
    # The Redis hold filters answer some refusals before PostgreSQL does, and tests that fake
    # an expiry by editing rows would meet a still-closed seat gate: they are off unless a test
    # asks for them (tests/bookings/test_hold_filters.py), or HOLD_FILTERS_IN_TESTS=1 runs the
    # suite with them on (the concurrency tests must then stay green too).
    if os.environ.get("HOLD_FILTERS_IN_TESTS") == "1":
        return
    settings.HOLD_FILTERS = {
        **settings.HOLD_FILTERS,
        "SEAT_GATE": False,
        "AVAILABILITY_COUNTER": False,
    }


@pytest.fixture(autouse=True)
def _default_language_after_each_test():
    """A request in another language (LocaleMiddleware) leaves that language active in the
    thread; without this, a later test reading an English message would read Russian."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _no_event_loop_left_running():
    """A test that leaves an event loop marked running in the main thread (Playwright's sync
    API does until `stop()`) would make every later ORM call raise SynchronousOnlyOperation.
    Fail that test, loudly, and clear the mark so the tests after it are unaffected."""
    yield
    loop = asyncio._get_running_loop()
    if loop is not None:
        asyncio._set_running_loop(None)
        pytest.fail(
            f"this test left an event loop running in the main thread ({loop!r}); "
            "stop Playwright (or whatever started it) in a finally block",
            pytrace=False,
        )


# --- order: the longest modules first, after every plain `db` test ----------------------------

# pytest-django runs plain `db` tests first, then transactional ones, then those without a
# database: a transactional test's flush deletes the rows data migrations installed (beat
# schedules, refund policies), which plain `db` tests read.  That order is kept; after it the
# longest modules go first, so under xdist none of them starts last and runs alone at the end.
LONGEST_FIRST = (
    "tests/faults/test_killed_workers.py",
    "tests/project/test_connection_budget.py",
    "tests/faults/test_pg_restart.py",
    "tests/pages/test_isolation.py",
    "tests/project/test_embedded_run.py",
    "tests/project/test_serve.py",
    "tests/payments/test_payment_concurrency.py",
    "tests/partners/test_worker_delivery.py",
    "tests/faults/test_two_beats.py",
    "tests/faults/test_state_machine.py",
)


def _transactional(item) -> bool:
    marker = item.get_closest_marker("django_db")
    if marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")):
        return True
    return bool({"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())))


def _set_node_id(item, nodeid: str) -> None:
    if hasattr(item, "_id"):  # pytest 9: a structured NodeId (`_nodeid` is no longer read)
        item._id = type(item._id).parse(nodeid)
    else:
        item._nodeid = nodeid


def _xdist_groups(config, items) -> None:
    """What pytest-xdist's `--dist loadgroup` does on a worker (`nodeid@group`), done so that
    pytest 9 sees it: xdist 3.8 still writes `item._nodeid`, which pytest 9 ignores, and the
    group's tests would be spread over the workers."""
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        groups = sorted({m.args[0] if m.args else m.kwargs.get("name", "default")
                         for m in item.iter_markers("xdist_group")})  # fmt: skip
        if groups and "@" not in item.nodeid:
            _set_node_id(item, f"{item.nodeid}@{'_'.join(groups)}")


def _unique_node_ids(items) -> None:
    """Schemathesis gives each API operation's test the same node id (the operation is only in
    the name).  pytest-xdist's scheduler keys tests by node id and would run one of them, so
    such tests get their name in the id: `...::test_api_keeps_to_its_schema[GET /api/...]`."""
    seen: dict[str, int] = {}
    for item in items:
        seen[item.nodeid] = seen.get(item.nodeid, 0) + 1
    for item in items:
        if seen[item.nodeid] > 1 and not item.nodeid.endswith("::" + item.name):
            _set_node_id(item, f"{item.nodeid.rsplit('::', 1)[0]}::{item.name}")


@pytest.hookimpl(trylast=True)  # after pytest-django's own ordering
def pytest_collection_modifyitems(config, items):
    _unique_node_ids(items)
    _xdist_groups(config, items)
    start = next((i for i, item in enumerate(items) if _transactional(item)), len(items))
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items[start:] = sorted(
        items[start:], key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank))
    )


# --- through PgBouncer (tests/pgbouncer.py) --------------------------------------------------


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup):
    """The test database, created on a direct connection (pytest-django's own fixture runs
    before any module is routed through the pooler); before it is dropped, again directly,
    the pooler lets go of its server connections to it."""
    yield
    from django.db import connection

    pgbouncer.release_database(connection.settings_dict["NAME"])


@pytest.fixture(scope="module", autouse=True)
def _through_pgbouncer_when_pooled(request):
    """A pooled module (the concurrency, fault and payment tests; every module with
    SEATKEEPER_POOLED_TESTS=all) reaches PostgreSQL through PgBouncer, from its first test's
    set-up to its last test's tear-down."""
    if str(request.path) not in request.config.stash.get(pgbouncer.POOLED_MODULES, set()):
        yield
        return
    request.getfixturevalue("django_db_setup")
    with pgbouncer.routed_through_pgbouncer():
        yield


# --- time per test directory ----------------------------------------------------------------

_seconds_by_directory: defaultdict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    # setup + call + teardown of each test, summed by its top directory (tests/<app>)
    directory = "/".join(report.nodeid.split("::", 1)[0].split("/")[:2])
    _seconds_by_directory[directory] += report.duration


@pytest.hookimpl(trylast=True)  # after --durations: the last thing a run prints
def pytest_terminal_summary(terminalreporter):
    if not _seconds_by_directory:
        return
    terminalreporter.write_sep("=", "time per test directory (setup + call + teardown)")
    for directory, seconds in sorted(_seconds_by_directory.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:8.1f}s  {directory}")
    terminalreporter.write_line(f"{sum(_seconds_by_directory.values()):8.1f}s  total")


@pytest.fixture
def customer(db):
    return UserFactory()


@pytest.fixture
def other_customer(db):
    return UserFactory()


@pytest.fixture
def staff_user(db):
    return StaffFactory()


@pytest.fixture
def flight(db):
    return FlightFactory()


# --- Redis Cluster ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """A real Redis Cluster on loopback (3 primaries, 1 replica each: tests/redis_cluster.py),
    started on first use by this test process and stopped at its end."""
    from tests import cluster_run
    from tests.redis_cluster import ThrowAwayCluster

    if cluster_run.WHOLE_RUN_CLUSTER is not None:  # the nightly run's: every test on it already
        cluster_run.WHOLE_RUN_CLUSTER.wait_healthy()
        yield cluster_run.WHOLE_RUN_CLUSTER
        return
    cluster = ThrowAwayCluster(tmp_path_factory.mktemp("redis-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


# The Redis a `redis_backend` test runs against: the run's single Redis, then the cluster.
# The default suite runs the hold-filter, waiting-room and throttle tests on both.
REDIS_BACKENDS = ["redis", "cluster"]


@pytest.fixture(params=REDIS_BACKENDS)
def redis_backend(request, settings):
    """ "redis" or "cluster"; on "cluster" the hold filters, the waiting room and the cache
    are on the test cluster, as REDIS_CLUSTER_URL puts them in production."""
    if request.param == "redis":
        from tests import cluster_run

        if cluster_run.WHOLE_RUN_CLUSTER is not None:
            pytest.skip("this run has every test on the Redis Cluster (tests/cluster_run.py)")
        yield "redis"
        return
    cluster = request.getfixturevalue("redis_cluster")
    cluster.wait_healthy()  # a failover test before may have left it re-forming
    cluster.point_settings_at(settings)
    yield "cluster"
    cluster.flush()
