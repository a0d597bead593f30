"""Payments' periodic work (registered with kernel.schedules at startup)."""

from kernel.schedules import Schedule, register_schedules

register_schedules(
    Schedule(
        "payments: purge expired idempotency keys",
        "payments.tasks.purge_idempotency_keys_task",
        3600,
        3000,
    ),
    Schedule("payments: retry pending refunds", "payments.tasks.retry_pending_refunds", 300, 280),
    Schedule(
        "payments: reconcile stuck payments",
        "payments.tasks.reconcile_stuck_payments_task",
        60,
        55,
    ),
    # Kicked after each commit writing sandbox events too (payments.gateways.sandbox_delivery).
    Schedule("payments: queue sandbox deliveries", "payments.queue_sandbox_deliveries", 1, 10),
)
