"""The seatless hold as ONE autocommit statement on PostgreSQL (bookings.one_statement_hold,
docs/performance.md "Issue 26: the hold as one autocommit statement").

`seatkeeper_hold_units` (migration 0025) left two catalogue rules to Python, asked after the
call on rows read beside it, so the hold needed a transaction (BEGIN, the call, COMMIT) that a
refusal could roll back.  This version asks them itself, before it writes anything, so the
call can be its own transaction:

* whether the sale is open: a flight's `flights.rules.is_bookable` (scheduled, leaving after
  `now`, gate not closed), an event's `events.rules.is_open` (on sale, `on_sale_at <= now <
  starts_at`); answers `closed`;
* whether the fare class is sold without seats: a flight's every cabin, an event's standing
  areas only (`events.sale_snapshot.is_standing_class`: the code starts with "GA-"); answers
  `seats-required`.

These are SQL copies of the catalogues' Python rules, asked only when `p_check_rules` (every
registered catalogue says `rules_in_hold_function`; a stand-in catalogue keeps the Python rules
and the caller's transaction).  tests/bookings/test_one_statement_hold.py proves the copies
equal on random sale states, with a control that breaks the SQL rule.

All or nothing inside the statement: the writes run in a block with an EXCEPTION handler (a
subtransaction), and a lost reserve (the fare row or a nested booking class) raises inside it,
so its booking and passenger INSERTs are undone before the function answers `sold-out` or
`class-sold-out`.  The refusals come in the Python path's order: cap, missing sale or class,
closed, seats required, missing booking class, sold out, booking class sold out.  The advisory
lock and `synchronous_commit` (both transaction-scoped) end with the statement's own implicit
transaction (tests/bookings/test_one_statement_hold_autocommit.py).
"""

import importlib

from django.db import migrations

# The previous version, recreated when this migration is reversed.
_0025 = importlib.import_module("bookings.migrations.0025_hold_units_function")

CREATE = r"""
CREATE OR REPLACE FUNCTION seatkeeper_hold_units(
    p_lock_key bigint,
    p_synchronous_commit boolean,
    p_customer_id bigint,
    p_sale_id bigint,
    p_fare_class text,
    p_booking_class text,
    p_units integer,
    p_cap integer,
    p_names text[],
    p_now timestamptz,
    p_expires_at timestamptz,
    p_check_rules boolean
) RETURNS TABLE (
    hold_outcome text,
    hold_booking_id bigint,
    hold_amount numeric,
    hold_currency text,
    hold_passenger_ids bigint[]
) LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_held bigint;
    v_price numeric;
    v_currency text;
    v_kind text;
    v_open boolean;
    v_booking bigint;
    v_passengers bigint[];
    v_rows integer;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    IF NOT p_synchronous_commit THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    IF p_cap IS NOT NULL THEN
        SELECT SUM(b.seat_count) INTO v_held FROM bookings_booking b
         WHERE b.customer_id = p_customer_id AND b.sale_id = p_sale_id
           AND b.status = 'HELD' AND b.expires_at > p_now;
        IF COALESCE(v_held, 0) + p_units > p_cap THEN
            RETURN QUERY SELECT 'cap'::text, NULL::bigint, NULL::numeric, NULL::text, NULL::bigint[];
            RETURN;
        END IF;
    END IF;
    SELECT i.price, i.currency, s.kind INTO v_price, v_currency, v_kind
      FROM bookings_inventory i JOIN bookings_sale s ON s.id = i.sale_id
     WHERE i.sale_id = p_sale_id AND i.fare_class = p_fare_class ORDER BY i.id LIMIT 1;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'missing'::text, NULL::bigint, NULL::numeric, NULL::text, NULL::bigint[];
        RETURN;
    END IF;
    IF p_check_rules THEN
        -- The catalogues' rules (see the migration's docstring), before anything is written.
        v_open := CASE v_kind
            WHEN 'FLIGHT' THEN EXISTS (
                SELECT 1 FROM flights_flight f
                 WHERE f.sale_id = p_sale_id AND f.status = 'SCHEDULED'
                   AND f.departure_at > p_now AND f.gate_closed_at IS NULL)
            WHEN 'EVENT' THEN EXISTS (
                SELECT 1 FROM events_event e
                 WHERE e.sale_id = p_sale_id AND e.status = 'ON_SALE'
                   AND e.on_sale_at <= p_now AND p_now < e.starts_at)
            ELSE false
        END;
        IF NOT v_open THEN
            RETURN QUERY SELECT 'closed'::text, NULL::bigint, NULL::numeric, NULL::text,
                                NULL::bigint[];
            RETURN;
        END IF;
        IF v_kind = 'EVENT' AND left(p_fare_class, 3) <> 'GA-' THEN
            RETURN QUERY SELECT 'seats-required'::text, NULL::bigint, NULL::numeric, NULL::text,
                                NULL::bigint[];
            RETURN;
        END IF;
    END IF;
    IF p_booking_class <> '' THEN
        SELECT c.price INTO v_price FROM bookings_bookingclass c
         WHERE c.sale_id = p_sale_id AND c.fare_class = p_fare_class AND c.code = p_booking_class
         LIMIT 1;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'no-class'::text, NULL::bigint, NULL::numeric, NULL::text,
                                NULL::bigint[];
            RETURN;
        END IF;
    END IF;
    BEGIN
        INSERT INTO bookings_booking (customer_id, sale_id, fare_class, booking_class, status,
                                      seat_count, amount, currency, expires_at, created_at,
                                      updated_at, confirmed_at, closed_at)
        VALUES (p_customer_id, p_sale_id, p_fare_class, p_booking_class, 'HELD', p_units,
                v_price * p_units, v_currency, p_expires_at, p_now, p_now, NULL, NULL)
        RETURNING id INTO v_booking;
        WITH written AS (
            INSERT INTO bookings_passenger (booking_id, sale_id, seat_id, full_name, is_live,
                                            seat_conditions_confirmed_at)
            SELECT v_booking, p_sale_id, NULL, n.name, true, NULL
              FROM unnest(p_names) WITH ORDINALITY AS n(name, place) ORDER BY n.place
            RETURNING id
        )
        SELECT array_agg(w.id ORDER BY w.id) INTO v_passengers FROM written w;
        -- Last: every hold of the class queues for this row's lock, held from here to the
        -- statement's end (its COMMIT).
        UPDATE bookings_inventory i SET held = i.held + p_units
         WHERE i.sale_id = p_sale_id AND i.fare_class = p_fare_class
           AND i.held <= i.capacity + i.overbook_limit - i.sold - p_units;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows <> 1 THEN
            RAISE EXCEPTION 'sold-out' USING ERRCODE = 'SKSO1';
        END IF;
        IF p_booking_class <> '' THEN
            -- bookings.booking_classes._RESERVE_SQL_POSTGRESQL: the chain locked in rank
            -- order, all rows or none.
            WITH chain AS MATERIALIZED (
                SELECT c.id, c.auth_limit - c.sold - c.held AS room FROM bookings_bookingclass c
                 WHERE c.sale_id = p_sale_id AND c.fare_class = p_fare_class
                   AND c.rank >= (SELECT r.rank FROM bookings_bookingclass r
                                   WHERE r.sale_id = p_sale_id AND r.fare_class = p_fare_class
                                     AND r.code = p_booking_class)
                 ORDER BY c.rank FOR UPDATE
            )
            UPDATE bookings_bookingclass t SET held = t.held + p_units FROM chain
             WHERE t.id = chain.id AND (SELECT MIN(room) FROM chain) >= p_units;
            GET DIAGNOSTICS v_rows = ROW_COUNT;
            IF v_rows = 0 THEN
                RAISE EXCEPTION 'class-sold-out' USING ERRCODE = 'SKSO2';
            END IF;
        END IF;
    EXCEPTION
        -- The block's writes (and the row locks it took) are undone, nothing else.
        WHEN SQLSTATE 'SKSO1' THEN
            RETURN QUERY SELECT 'sold-out'::text, NULL::bigint, NULL::numeric, NULL::text,
                                NULL::bigint[];
            RETURN;
        WHEN SQLSTATE 'SKSO2' THEN
            RETURN QUERY SELECT 'class-sold-out'::text, NULL::bigint, NULL::numeric, NULL::text,
                                NULL::bigint[];
            RETURN;
    END;
    RETURN QUERY SELECT 'held'::text, v_booking, v_price * p_units, v_currency, v_passengers;
END
$fn$
"""

DROP = """
DROP FUNCTION IF EXISTS seatkeeper_hold_units(
    bigint, boolean, bigint, bigint, text, text, integer, integer, text[], timestamptz,
    timestamptz, boolean
)
"""


def _on_postgresql(*statements: str):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("bookings", "0025_hold_units_function")]

    operations = [
        migrations.RunPython(
            _on_postgresql(_0025.DROP, CREATE),
            _on_postgresql(DROP, _0025.CREATE),
            elidable=False,
        ),
    ]
