"""Staff admin of the events catalogue: venues with their plan builders (`venues`), events
with their sale (`events`) and calling events off (`call_off`).  Importing the package
registers them with the admin site."""

from events.admin import call_off, events, venues

__all__ = ["call_off", "events", "venues"]
