"""The events catalogue's periodic work (registered with kernel.schedules at startup)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    # An event on sale becomes FINISHED within a minute of its end (events.lifecycle).
    Schedule("events: finish ended events", "events.finish_events", 60, 50),
)
