"""The waitlist's periodic work (registered with kernel.schedules); its schedule and task keep
the names they had when the waitlist's doors were the waitroom app's."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    Schedule(
        "waitroom: close waitlists of departed flights",
        "waitroom.close_departed_waitlists",
        300,
        280,
    ),
)
