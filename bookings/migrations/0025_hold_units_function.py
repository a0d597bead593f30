"""The seatless hold in one statement on PostgreSQL (bookings.one_statement_hold, docs/performance.md
"Issue 26: the hold in one statement").

`seatkeeper_hold_units` does, in one round trip and in this order, what the Python path
(bookings.customer_holds._hold_units with bookings.holding) does in six: the customer's
advisory lock (and the hold's asynchronous COMMIT), the cap's SUM, the fare class's price, the
booking class's price, the booking and passenger INSERTs, and last the conditional reserve of
the fare row and then of the nested booking-class chain in rank order (docs/architecture.md,
"Lock order").  It answers an outcome and what the answer needs; a refusal writes nothing
before the reserve, and a lost reserve leaves its INSERTs to the caller's rollback (the
Python path raises there too).  VOLATILE: every statement inside takes a fresh snapshot, so
the SUM runs after the advisory lock is granted and sees the previous hold of the same
customer (the cap race stays closed).  Whether the sale is open and sells seatless units stays
the catalogue's Python rule, asked on the rows read beside the call, in the same order.

SQLite (the embedded mode) keeps the Python path; tests/bookings/test_one_statement_hold.py
proves the two equal.  Nothing here on other backends.
"""

from django.db import migrations

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
    p_expires_at timestamptz
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
    SELECT i.price, i.currency INTO v_price, v_currency FROM bookings_inventory i
     WHERE i.sale_id = p_sale_id AND i.fare_class = p_fare_class ORDER BY i.id LIMIT 1;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'missing'::text, NULL::bigint, NULL::numeric, NULL::text, NULL::bigint[];
        RETURN;
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
    -- Last: every hold of the class queues for this row's lock, held from here to COMMIT.
    UPDATE bookings_inventory i SET held = i.held + p_units
     WHERE i.sale_id = p_sale_id AND i.fare_class = p_fare_class
       AND i.held <= i.capacity + i.overbook_limit - i.sold - p_units;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    IF v_rows <> 1 THEN
        RETURN QUERY SELECT 'sold-out'::text, NULL::bigint, NULL::numeric, NULL::text,
                            NULL::bigint[];
        RETURN;
    END IF;
    IF p_booking_class <> '' THEN
        -- bookings.booking_classes._RESERVE_SQL_POSTGRESQL: the chain locked in rank order,
        -- all rows or none.
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
            RETURN QUERY SELECT 'class-sold-out'::text, NULL::bigint, NULL::numeric, NULL::text,
                                NULL::bigint[];
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT 'held'::text, v_booking, v_price * p_units, v_currency, v_passengers;
END
$fn$
"""

DROP = """
DROP FUNCTION IF EXISTS seatkeeper_hold_units(
    bigint, boolean, bigint, bigint, text, text, integer, integer, text[], timestamptz, timestamptz
)
"""


def _on_postgresql(sql: str):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("bookings", "0024_resale_passenger_ids")]

    operations = [
        migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP), elidable=False),
    ]
