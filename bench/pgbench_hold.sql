-- The article's hold transaction on ONE hot fare-inventory row, for pgbench.
-- bench/flash_sale.py runs it (see docs/performance.md for the command):
--   pgbench -n -c 32 -j 2 -T 10 -f bench/pgbench_hold.sql -D inv_id=.. -D flight_id=..
--           -D customer_id=.. -D seat_lo=.. -D seat_hi=.. seatkeeper_bench_flash
-- 1. reserve one unit with a conditional UPDATE (the hot row every hold must lock),
-- 2. insert the HELD booking, 3. claim a seat with a conditional UPDATE.
-- The seat is given an already-lapsed deadline so that the next transaction may take it over
-- (the article's `held_until < now()` branch): every transaction does the full work.
\set seat_id random(:seat_lo, :seat_hi)
BEGIN;
UPDATE bookings_inventory SET held = held + 1
 WHERE id = :inv_id AND sold + held + 1 <= capacity + overbook_limit;
INSERT INTO bookings_booking
       (customer_id, sale_id, fare_class, status, seat_count, booking_class, amount, currency,
        expires_at, created_at, updated_at)
VALUES (:customer_id, :flight_id, 'ECONOMY', 'HELD', 1, '', 89.00, 'EUR',
        now() + interval '10 minutes', now(), now())
RETURNING id AS booking_id \gset
UPDATE bookings_seat
   SET status = 'HELD', booking_id = :booking_id, held_until = now() - interval '1 second'
 WHERE id = :seat_id
   AND (status = 'AVAILABLE' OR (status = 'HELD' AND held_until < now()));
COMMIT;
