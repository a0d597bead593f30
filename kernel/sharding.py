"""Where every table would live on a Citus cluster distributed by the engine's sale.

Citus is not installed here; this map is what a deployment would run
(`create_distributed_table` / `create_reference_table`, docs/performance.md, "Beyond one
primary"), and tests/project/test_citus_schema.py holds the migrated schema to it by reading
`pg_catalog`: every table is in the map, and a distributed table's column is NOT NULL and
part of its primary key, of every unique constraint or index and of every foreign key to
another distributed table.  tests/project/test_citus_transactions.py holds the engine's
paths to the other half: no transaction writes rows of two sales.

Placements:
- `Distributed(column)`: sharded by the engine's sale id, co-located with `bookings_sale`.
  A flight's id *is* its sale id (CHECK `flight_id_is_its_sale_id`), so the flights tables of
  the day of departure are distributed by `flight_id` and land beside their sale's rows.
- `REFERENCE`: small, read by sale transactions (foreign keys point at them), written
  rarely; Citus copies them to every node.  A write to one is a transaction on every node.
- `GLOBAL`: on the coordinator only, never joined with a sale's rows and never written in a
  sale's transaction except where `CROSS_NODE_WRITES` says so.

This module names tables, not models, so it imports nothing (kernel imports nothing of ours).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Distributed:
    column: str


@dataclass(frozen=True)
class _Undistributed:
    name: str


REFERENCE: Final = _Undistributed("reference")
GLOBAL: Final = _Undistributed("global")

Placement = Distributed | _Undistributed

BY_SALE: Final = Distributed("sale_id")
BY_FLIGHT: Final = Distributed("flight_id")  # = the flight's sale id, by a CHECK

TABLES: Final[dict[str, Placement]] = {
    # The engine: everything a hold, payment, confirm, cancel or expiry writes.
    "bookings_sale": Distributed("id"),
    "bookings_booking": BY_SALE,
    "bookings_bookingclass": BY_SALE,
    "bookings_inventory": BY_SALE,
    "bookings_seat": BY_SALE,
    "bookings_passenger": BY_SALE,
    "bookings_ticket": BY_SALE,
    "bookings_ticketcredential": BY_SALE,
    "bookings_gatedevice": BY_SALE,
    "bookings_gatescan": BY_SALE,
    "bookings_notification": BY_SALE,
    "bookings_outboxevent": BY_SALE,
    "bookings_processedevent": BY_SALE,
    "waitroom_waitlistentry": BY_SALE,
    # A resale listing and the waitlist offer it makes are the seller's sale's rows.
    "bookings_resale": BY_SALE,
    "payments_payment": BY_SALE,
    "payments_refund": BY_SALE,
    # Hold-path idempotency: written in the hold's own transaction (kernel.idempotency.run_once).
    "bookings_idempotencyrecord": BY_SALE,
    # The waiting room in front of one sale: its rows are that sale's.
    "waitroom_waitingroom": BY_SALE,
    "waitroom_queueentry": BY_SALE,
    "waitroom_admission": BY_SALE,
    # The live panel's audit of pause, resume and rate changes: the room's (so the sale's).
    "waitroom_roomchange": BY_SALE,
    "waitroom_presalecode": BY_SALE,
    "waitroom_presaleredemption": BY_SALE,
    # Flights: the catalogue item is its sale (same id); the day of departure hangs off it.
    "flights_flight": BY_SALE,
    "flights_cabindeparture": BY_FLIGHT,
    "flights_deniedboarding": BY_FLIGHT,
    "flights_compensation": BY_FLIGHT,
    "flights_noshow": BY_FLIGHT,
    "flights_onlinecheckin": BY_FLIGHT,
    "flights_volunteeroffer": BY_FLIGHT,
    # A flight number once per departure: a rule across sales, claimed before the flight's
    # sale is written (flights.flight_numbers), never in its transaction.
    "flights_flightnumber": GLOBAL,
    "flights_airport": REFERENCE,
    "flights_carrier": REFERENCE,
    # Events: an event's sale is NULL while it is a draft, so events and their plans are
    # reference tables; the sale's own rows (seats, inventory) are the engine's, above.
    "events_venue": REFERENCE,
    "events_section": REFERENCE,
    "events_venueseat": REFERENCE,
    "events_event": REFERENCE,
    "events_pricecategory": REFERENCE,
    "events_categoryassignment": REFERENCE,
    # Payments' rules and the gateway's side.
    "payments_refundpolicy": REFERENCE,
    # One row per gateway event, unique by (gateway, event id): checked before the payment's
    # own transaction (payments.webhooks), never in it.
    "payments_webhookevent": GLOBAL,
    # The sandbox gateway is a stand-in for an outside system (Stripe's own database).
    "payments_sandboxcharge": GLOBAL,
    "payments_sandboxevent": GLOBAL,
    "payments_sandboxrefund": GLOBAL,
    # People and access: foreign keys of every sale's rows point at auth_user.
    "auth_user": REFERENCE,
    "auth_group": REFERENCE,
    "auth_permission": REFERENCE,
    "auth_group_permissions": REFERENCE,
    "auth_user_groups": REFERENCE,
    "auth_user_user_permissions": REFERENCE,
    "authtoken_token": REFERENCE,
    "django_content_type": REFERENCE,
    "accounts_emailaddress": REFERENCE,
    "languages_languagepreference": GLOBAL,
    "django_session": GLOBAL,
    "django_admin_log": GLOBAL,
    "django_migrations": GLOBAL,
    "axes_accessattempt": GLOBAL,
    "axes_accessattemptexpiration": GLOBAL,
    "axes_accessfailurelog": GLOBAL,
    "axes_accesslog": GLOBAL,
    # Beat's schedule and the relay's lease: one of each for the whole deployment.
    "django_celery_beat_clockedschedule": GLOBAL,
    "django_celery_beat_crontabschedule": GLOBAL,
    "django_celery_beat_intervalschedule": GLOBAL,
    "django_celery_beat_periodictask": GLOBAL,
    "django_celery_beat_periodictasks": GLOBAL,
    "django_celery_beat_solarschedule": GLOBAL,
    "kernel_relaylease": GLOBAL,
    # Partners: endpoints are few; a delivery is one per (event, endpoint), written by the
    # partner relay after the sale's transaction committed, never in it.
    "partners_webhookendpoint": GLOBAL,
    "partners_webhookdelivery": GLOBAL,
    # The reference consumer of the event log stands for another system with its own store.
    "checkin_sync_appliedevent": GLOBAL,
    "checkin_sync_checkinbooking": GLOBAL,
    "checkin_sync_checkinpassenger": GLOBAL,
    "checkin_sync_saletally": GLOBAL,
}

# Reference or global tables that a sale's transaction writes today, each a transaction that
# spans nodes under Citus (a two-phase commit), with the reason it is accepted.
CROSS_NODE_WRITES: Final[dict[str, str]] = {
    # payments.webhooks.record_and_apply inserts the event's row and confirms (or fails,
    # or refunds) the payment in one transaction, so a duplicate delivery can never apply
    # twice and a failed apply is never recorded as done.  Under Citus that is a two-phase
    # commit between the coordinator and the sale's node: one per webhook, not per hold,
    # so the hot path (holds) stays on one node.  Moving the row to the sale's node instead
    # would need a sale for events that name no known payment (refused, still recorded).
    "payments_webhookevent": "the webhook's record and its effect commit together",
    # flights.services.create_flight claims the number in its own transaction first; only
    # staff adding or renumbering a flight in the admin claim it in the admin's transaction
    # (Django wraps the whole change form in one), so a refused save leaves no claim behind.
    # Rare, never on a sale's hot path.
    "flights_flightnumber": "a staff add or renumber in the admin claims the number with it",
}

# Foreign keys from a reference table to a distributed one: Citus cannot keep them, so the
# cut-over drops exactly these (kernel/citus_cutover.py, step 4), each with what keeps the
# link right without it.  Any other such key stays a break of the schema test.
UNCHECKED_LINKS: Final[dict[tuple[str, str], str]] = {
    # events.services._open_sale creates the sale and names it in the same transaction, once
    # (a draft has none); a sale is never deleted (every sale row's key to it is PROTECT).
    ("events_event", "sale_id"): "written with the sale it names; sales are never deleted",
    # An override is set by staff for a sale they picked from the existing ones; sales are
    # never deleted, so its CASCADE never fires.
    ("payments_refundpolicy", "sale_id"): "set for an existing sale; sales are never deleted",
}


# Links from a row of one sale to a row of another, kept without a database key (Citus keeps
# no foreign key across shards), each with what keeps it right.
CROSS_SALE_LINKS: Final[dict[tuple[str, str], str]] = {
    # flights.rerouting writes it (the first flight's sale) only after the new booking (the
    # later flight's sale) committed, and bookings are never deleted (PROTECT in the ORM).
    ("flights_deniedboarding", "rebooked_onto_id"): "written after the booking it names",
}


def distributed_tables() -> dict[str, str]:
    return {t: p.column for t, p in TABLES.items() if isinstance(p, Distributed)}


def reference_tables() -> list[str]:
    return [t for t, p in TABLES.items() if p is REFERENCE]
