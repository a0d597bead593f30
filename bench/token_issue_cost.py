"""What issuing an API token costs in this process, per token (issue 26).

    .venv/bin/python bench/token_issue_cost.py --checkout X --database-url …/seatkeeper_bench_x

Issued as the login API issues one (`accounts.tokens.issue_token`: the token, then, after the
commit, its user read and cached as the token's first request would, so that request is a
cache hit) and as the benches' customers get theirs (`issue_tokens`, 200 at a time: one
INSERT, one read per token, one cache write).  On a checkout from before that service, DRF's
`Token.objects.get_or_create` and `bulk_create`: its first request reads the user instead.
The login's password check (PBKDF2, tens of ms) is not in it.

Prints CPU ms per token (thread time, median of 5 rounds, as bench/request_cost.py measures
a request), PostgreSQL statements and Redis commands per token.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.flash_sale import DEFAULT_REDIS_DB, django_setup, recreate_database  # noqa: E402
from bench.request_cost import _measure  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_cost"
BATCH = 200


def _issuers():
    """(one token, many tokens) as this checkout issues them."""
    try:
        from accounts.tokens import issue_token, issue_tokens
    except ImportError:  # a checkout before issue 26's token issue
        from rest_framework.authtoken.models import Token

        def one(user):
            return Token.objects.get_or_create(user=user)[0]

        def many(users):
            return Token.objects.bulk_create(Token(user=u, key=Token.generate_key()) for u in users)

        return one, many
    return (lambda user: issue_token(user=user)), (lambda users: issue_tokens(users=users))


def run(args) -> None:
    recreate_database(args.database_url)
    django_setup(args.database_url, args.redis_url, args.checkout.resolve())
    import redis
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    redis.Redis.from_url(args.redis_url).flushdb()
    with contextlib.redirect_stdout(None):
        call_command("migrate", verbosity=0)
    User = get_user_model()
    users = User.objects.bulk_create(
        User(username=f"issue-{i}", password="!") for i in range(1000 + 10 * BATCH)
    )
    one, many = _issuers()
    for user in users[:10]:  # warm-up: first imports and per-connection compilations
        one(user)

    def issue(user):
        return lambda: one(user) and 200

    def issue_batch(batch):
        return lambda: many(batch) and 200

    single = _measure([issue(u) for u in users[10:1000]])
    batches = [users[i : i + BATCH] for i in range(1000, len(users), BATCH)]
    bulk = _measure([issue_batch(b) for b in batches])
    print(f"checkout: {args.checkout.resolve()}")
    for name, f, per in (("issue", single, 1), (f"issue x{BATCH}", bulk, BATCH)):
        print(
            f"  {name:10} cpu {f['cpu_ms'] / per:6.3f} ms/token"
            f"  (rounds {[round(x / per, 3) for x in f['cpu_ms_rounds']]})"
            f"  sql {f['sql_per_request'] / per:.2f}  redis {f['redis_per_request'] / per:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--redis-url", default=f"redis://127.0.0.1:6379/{DEFAULT_REDIS_DB + 1}")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
