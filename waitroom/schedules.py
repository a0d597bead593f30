"""The waitlist's and the waiting room's periodic work (registered with kernel.schedules)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    Schedule(
        "waitroom: close waitlists of departed flights",
        "waitroom.close_departed_waitlists",
        300,
        280,
    ),
    Schedule("waitroom: admit shoppers", "waitroom.admit_shoppers", 2, 2),
)
