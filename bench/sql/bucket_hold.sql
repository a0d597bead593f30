-- One seatless hold, as hold_seatless runs it, against one of :buckets inventory rows.
-- pgbench -n -f bench/sql/bucket_hold.sql -D buckets=N: N=1 is today's single hot row.
\set b random(1, :buckets)
BEGIN;
UPDATE bench_bucket SET held = held + 1 WHERE id = :b AND held + 1 <= cap;
INSERT INTO bench_bucket_hold (bucket_id, created_at) VALUES (:b, now());
COMMIT;
