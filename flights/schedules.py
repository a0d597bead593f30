"""The flight catalogue's periodic work (registered with kernel.schedules at startup)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    # The hold filters' availability counters drift only towards "too high" in normal work;
    # this corrects the rare drift low (a give-back lost while Redis was away) within seconds.
    Schedule("flights: rebuild hold counters", "flights.rebuild_hold_counters", 15, 12),
    # Gate close (no-shows, seats to standby) within a minute of its time; a run that meets a
    # busy row leaves that ticket for the next one (flights.departure).
    Schedule("flights: close due gates", "flights.close_due_gates", 60, 55),
    # A denial's rerouting whose task was lost (flights.rerouting): booked within a minute.
    Schedule("flights: reroute pending denials", "flights.reroute_pending", 60, 55),
)
