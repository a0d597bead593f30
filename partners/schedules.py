"""Partner webhooks' periodic work (registered with kernel.schedules at startup)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    Schedule(
        "partners: resend overdue webhook deliveries", "partners.resend_due_deliveries", 30, 25
    ),
)
