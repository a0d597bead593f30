"""Seatkeeper settings, read from the environment (twelve-factor).

With no DATABASE_URL / REDIS_URL the project runs on embedded defaults: SQLite with
IMMEDIATE transactions, local-memory cache, in-memory channel layer and an in-process
Celery broker.  With them set it runs on PostgreSQL and Redis, as in production.

Django reads this package (DJANGO_SETTINGS_MODULE=config.settings); each part is a module
of its own, named for what it sets, and this file gathers them.  A part's UPPERCASE
names are the settings (tests/project/test_settings_parts.py checks that none is lost).
"""

# ruff: noqa: F403
# The parts, in any order: each imports what it needs from the others (environment.py, which
# reads .env, before all).  A new setting goes into the part it belongs to, or a new part here.
from config.sentry import init_sentry
from config.settings.api import *
from config.settings.application import *
from config.settings.caches_and_channels import *
from config.settings.database import *
from config.settings.engine import *
from config.settings.environment import *
from config.settings.observability import *
from config.settings.observability import SENTRY
from config.settings.partners import *
from config.settings.payments import *
from config.settings.security import *
from config.settings.workers import *

# Error tracking only when a DSN is configured (no DSN: the SDK is never initialised).
init_sentry(
    dsn=SENTRY["DSN"],
    environment=SENTRY["ENVIRONMENT"],
    traces_sample_rate=SENTRY["TRACES_SAMPLE_RATE"],
)
