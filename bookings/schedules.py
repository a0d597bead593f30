"""The sale engine's periodic work (registered with kernel.schedules at startup)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    Schedule("bookings: expire holds", "bookings.expire_holds", 30, 25),
    Schedule(
        "bookings: resend stale notifications", "bookings.redispatch_stale_notifications", 60, 55
    ),
)
