"""The waiting room's periodic work (registered with kernel.schedules)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(Schedule("waitroom: admit shoppers", "waitroom.admit_shoppers", 2, 2))
