#!/usr/bin/env bash
# PostgreSQL's own ceiling for the seatless hold on 1 hot inventory row vs N bucket rows.
#   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/seatkeeper_bench bench/bucket_ceiling.sh 32 8
# Creates two scratch tables in the bench database; prints tps per bucket count.
set -euo pipefail
cd "$(dirname "$0")/.."
URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/seatkeeper_bench}
CLIENTS=${1:-32}
MAX_BUCKETS=${2:-8}
SECONDS_EACH=${3:-10}
PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | tail -1)
for buckets in 1 "$MAX_BUCKETS"; do
  psql -q "$URL" <<SQL
DROP TABLE IF EXISTS bench_bucket_hold, bench_bucket;
CREATE TABLE bench_bucket (id int PRIMARY KEY, held int NOT NULL, cap int NOT NULL,
                           CHECK (held <= cap));
INSERT INTO bench_bucket SELECT g, 0, 1000000000 FROM generate_series(1, $buckets) g;
CREATE TABLE bench_bucket_hold (id bigserial PRIMARY KEY, bucket_id int, created_at timestamptz);
SQL
  tps=$("$PGBENCH" -n -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -D buckets="$buckets" \
        -f bench/sql/bucket_hold.sql "$URL" | awk '/^tps/ {print $3; exit}')
  echo "buckets=$buckets clients=$CLIENTS tps=$tps"
done
psql -q "$URL" -c "DROP TABLE IF EXISTS bench_bucket_hold, bench_bucket"
