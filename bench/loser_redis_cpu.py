"""CPU per call of a losing hold's two Redis round trips, in the old shape and the new one.

    .venv/bin/python bench/loser_redis_cpu.py --redis-url redis://127.0.0.1:6379/9

Issue 26 (branch h-loser2): the token check's pipeline (GET the cached user, INCR + EXPIRE
the holds window) against its one EVALSHA (`kernel.web.throttles`), and the hold filters'
pipeline (the waiting room's two protection GETs and EVAL of TAKE on a sold-out counter)
against its one EVALSHA (`bookings.availability_scripts.riding`).  Same keys, values and
answers; thread CPU per call, each shape 3,000 times a round, five rounds alternated, median
printed.  `bench/request_cost.py` cannot resolve a ~30 µs change in a ~0.9 ms request on a
shared machine; this can, and it does without the profiler (which inflates redis-py's
call-heavy code about threefold).  It writes a few keys under "bench:loser:" and deletes them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bookings import availability_scripts as scripts


def _get_and_count_script() -> str:
    # kernel.web.throttles imports Django's cache; its script text is all this needs.
    source = (Path(__file__).resolve().parent.parent / "kernel/web/throttles.py").read_text()
    return source.split('_GET_AND_COUNT = """', 1)[1].split('"""', 1)[0]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    r = redis.Redis.from_url(args.redis_url)
    user, window = "bench:loser:auth:token:{tok:x}", "bench:loser:throttle:holds:{tok:x}:1"
    counter, generation = "bench:loser:hold:{s1}:left:ECONOMY", "bench:loser:waitroom:gen"
    entry = "bench:loser:waitroom:protection:sale:{s1}"
    r.set(user, b"\x80" + b"u" * 300)
    r.set(generation, b"g" * 40)
    r.set(entry, b"e" * 60)
    r.hset(counter, mapping={"n": 0, "at": int(time.time() * 1000), "pending": 0})
    get_and_count = r.script_load(_get_and_count_script())
    riding = r.script_load(scripts.riding(scripts.TAKE)[0])

    def token_pipeline():
        pipe = r.pipeline(transaction=False)
        pipe.get(user)
        pipe.incr(window)
        pipe.expire(window, 61)
        return pipe.execute()

    def token_evalsha():
        return r.evalsha(get_and_count, 2, user, window, 61)

    def filters_pipeline():
        pipe = r.pipeline(transaction=False)
        pipe.get(generation)
        pipe.get(entry)
        pipe.execute_command("EVAL", scripts.TAKE, 1, counter, 1)
        return pipe.execute()

    def filters_evalsha():
        return r.evalsha(riding, 3, generation, entry, counter, 2, 1)

    shapes = (token_pipeline, token_evalsha, filters_pipeline, filters_evalsha)
    assert token_pipeline()[0] == token_evalsha()[0]
    assert filters_pipeline() == filters_evalsha()
    rounds: dict[str, list[float]] = {shape.__name__: [] for shape in shapes}
    try:
        for _ in range(5):
            for shape in shapes:
                start = time.thread_time()
                for _ in range(args.calls):
                    shape()
                rounds[shape.__name__].append((time.thread_time() - start) / args.calls * 1e6)
    finally:
        r.delete(user, window, counter, generation, entry)
    for name, values in rounds.items():
        print(
            f"{name:17s} {statistics.median(values):5.1f} µs CPU/call  "
            f"(rounds {[round(v, 1) for v in values]})"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
