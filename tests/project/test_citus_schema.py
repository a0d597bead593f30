"""The migrated schema, with the cut-over's composite keys (kernel/citus_cutover.py), against
kernel.sharding's map: what Citus needs to distribute it by sale.

The check reads pg_catalog (tests/project/citus_catalog.py), never the models.  `OPEN_BREAKS`
would list the rules the schema still breaks, each a decision not yet carried out
(docs/performance.md, "Beyond one primary"); it is empty now and only shrinks: the test
fails on a new break and on a fixed one still listed.  A link across sales
(kernel.sharding.CROSS_SALE_LINKS) keeps no foreign key, before and after the cut-over."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from kernel.citus_cutover import composite_keys_sql
from kernel.sharding import BY_SALE, CROSS_SALE_LINKS, REFERENCE, TABLES
from tests.events.factories import EventFactory
from tests.events.test_event_tickets import seated_tickets
from tests.factories import FlightFactory, UserFactory, named_hold
from tests.project.citus_catalog import Break, breaks

pytestmark = pytest.mark.django_db

OPEN_BREAKS_BY_TABLE: dict[str, list[str]] = {}
OPEN_BREAKS = {Break(t, rule) for t, rules in OPEN_BREAKS_BY_TABLE.items() for rule in rules}


def cut_over(cursor) -> None:
    for statement in composite_keys_sql(cursor, TABLES):
        cursor.execute(statement)


def test_every_table_is_placed_and_the_distributed_ones_keep_citus_rules():
    with connection.cursor() as cursor:
        cut_over(cursor)  # rolled back with the test's transaction
        found = breaks(cursor, TABLES)
    new = sorted(str(b) for b in found - OPEN_BREAKS)
    fixed = sorted(str(b) for b in OPEN_BREAKS - found)
    assert not new, "the schema breaks Citus's rules:\n" + "\n".join(new)
    assert not fixed, "fixed, so take them off OPEN_BREAKS_BY_TABLE:\n" + "\n".join(fixed)


def test_control_a_table_that_breaks_each_rule_is_named_and_a_right_one_is_not():
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE TABLE citus_control_wrong (
                id bigserial PRIMARY KEY,
                sale_id bigint REFERENCES bookings_sale (id),
                serial varchar(20) UNIQUE,
                booking_id bigint REFERENCES bookings_booking (id)
            );
            ALTER TABLE bookings_booking ADD UNIQUE (id, sale_id);
            CREATE TABLE citus_control_right (
                id bigint NOT NULL,
                sale_id bigint NOT NULL,
                serial varchar(20) NOT NULL,
                booking_id bigint NOT NULL,
                PRIMARY KEY (id, sale_id),
                UNIQUE (sale_id, serial),
                FOREIGN KEY (booking_id, sale_id) REFERENCES bookings_booking (id, sale_id)
            );
            CREATE TABLE citus_control_unplaced (id bigint PRIMARY KEY);
            CREATE TABLE citus_control_reference (
                id bigint PRIMARY KEY, sale_id bigint REFERENCES bookings_sale (id)
            );
            """
        )
        tables = {
            **TABLES,
            "citus_control_wrong": BY_SALE,
            "citus_control_right": BY_SALE,
            "citus_control_reference": REFERENCE,
        }
        found = {b for b in breaks(cursor, tables) if b.table.startswith("citus_control")}
    assert not {b for b in found if b.table == "citus_control_right"}, found
    assert {b.rule for b in found if b.table == "citus_control_unplaced"} == {
        "not in kernel.sharding.TABLES"
    }
    wrong = {str(b) for b in found if b.table == "citus_control_wrong"}
    assert wrong == {
        "citus_control_wrong: sale_id may be NULL",
        "citus_control_wrong: primary key (id) lacks sale_id",
        "citus_control_wrong: unique citus_control_wrong_serial_key (serial) lacks sale_id",
        "citus_control_wrong: foreign key (booking_id) to bookings_booking lacks sale_id",
    }, found
    assert {str(b) for b in found if b.table == "citus_control_reference"} == {
        "citus_control_reference: reference table's foreign key (sale_id) to distributed "
        "bookings_sale"
    }


def test_the_cut_overs_composite_foreign_key_refuses_a_passenger_of_another_sale():
    booking = named_hold(customer=UserFactory(), flight=FlightFactory(), seats=("12A",))
    other_sale = FlightFactory().sale_id
    with connection.cursor() as cursor:
        # The hold's deferred foreign-key checks must run before the keys can change, and the
        # rewritten (deferrable) keys must check at once, not at the test's rollback.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cut_over(cursor)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "UPDATE bookings_passenger SET sale_id = %s WHERE booking_id = %s RETURNING id",
            [booking.sale_id, booking.pk],
        )
        assert cursor.fetchall(), "its own sale is accepted"
        with pytest.raises(IntegrityError), transaction.atomic():
            cursor.execute(
                "UPDATE bookings_passenger SET sale_id = %s WHERE booking_id = %s",
                [other_sale, booking.pk],
            )


def test_the_cut_overs_widened_one_to_one_still_refuses_a_second_ticket_of_a_passenger():
    """Step 3 widens a unique on exactly a widened foreign key's columns (the ticket's
    passenger): the same rule, since the key proves the ticket's sale is its passenger's.
    A unique of its own (a payment's key per customer) is not widened: the main test still
    lists it."""
    _, (ticket, _) = seated_tickets(UserFactory(), EventFactory())
    copy = """
        INSERT INTO bookings_ticket (booking_id, passenger_id, sale_id, serial, code,
            passenger_name, seat_no, fare_class, status, issued_at)
        SELECT booking_id, passenger_id, sale_id, serial || 'x', code, passenger_name, seat_no,
            fare_class, status, issued_at FROM bookings_ticket WHERE id = %s
    """
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cut_over(cursor)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conname = 'bookings_ticket_passenger_id_key'"
        )
        assert cursor.fetchone() == ("UNIQUE (passenger_id, sale_id)",)
        with pytest.raises(IntegrityError, match="passenger_id_key"), transaction.atomic():
            cursor.execute(copy, [ticket.pk])


def test_the_cut_over_drops_only_the_named_links_of_reference_tables_to_a_sale():
    """Step 4 drops the keys of kernel.sharding.UNCHECKED_LINKS (an event's sale, a refund
    policy's override); the control, a reference table's key to a sale not named there, is
    kept and still named a break."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE citus_control_reference ("
            " id bigint PRIMARY KEY, sale_id bigint REFERENCES bookings_sale (id))"
        )
        cut_over(cursor)
        found = breaks(cursor, {**TABLES, "citus_control_reference": REFERENCE})
        cursor.execute(
            "SELECT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f'"
            " AND confrelid = 'bookings_sale'::regclass"
            " AND conrelid::regclass::text IN"
            " ('events_event', 'payments_refundpolicy', 'citus_control_reference')"
        )
        kept = {row[0] for row in cursor.fetchall()}
    assert kept == {"citus_control_reference"}
    assert {str(b) for b in found if b.table == "citus_control_reference"} == {
        "citus_control_reference: reference table's foreign key (sale_id) to distributed "
        "bookings_sale"
    }


def keyed_links(cursor) -> set[tuple[str, str]]:
    """The links of kernel.sharding.CROSS_SALE_LINKS that carry a foreign key (or are gone)."""
    wrong = set()
    for table, column in CROSS_SALE_LINKS:
        cursor.execute(
            "SELECT attnum FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s"
            " AND NOT attisdropped",
            [table, column],
        )
        found = cursor.fetchone()
        cursor.execute(
            "SELECT 1 FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass"
            " AND %s = ANY (conkey)",
            [table, found[0] if found else -1],
        )
        if found is None or cursor.fetchone():
            wrong.add((table, column))
    return wrong


def test_a_link_across_sales_keeps_no_foreign_key_even_after_the_cut_over():
    """A denial's rerouting booking is another sale's row: a key there would be widened by
    the cut-over into one that refuses every rerouting (and Citus keeps none across shards)."""
    with connection.cursor() as cursor:
        assert not keyed_links(cursor)
        cut_over(cursor)
        assert not keyed_links(cursor)


def test_control_a_link_across_sales_with_a_foreign_key_is_named():
    with connection.cursor() as cursor:
        cursor.execute(
            "ALTER TABLE flights_deniedboarding ADD FOREIGN KEY (rebooked_onto_id)"
            " REFERENCES bookings_booking (id)"
        )
        assert keyed_links(cursor) == {("flights_deniedboarding", "rebooked_onto_id")}
