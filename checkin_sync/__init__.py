"""Check-in sync: the event log's reference consumer (docs/event-log.md).

It stands for another system of the airline: it reads nothing of Seatkeeper but the event log
(its imports are limited to `kernel.eventlog`, enforced by lint-imports) and keeps its own
tables: who travels in which seat, per booking, and how many passengers each sale expects at
check-in.  In production it would keep them in its own database; here they share ours.
"""
