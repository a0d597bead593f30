"""Errors of the events catalogue.  Like every DomainError they carry their problem `type`
slug and HTTP status for the API, and a message that pages and admin show as is.  Titles are
translated lazily; details are written in the language active where the error is raised."""

from collections.abc import Sequence

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from kernel.errors import DomainError


class EventNotFound(DomainError):
    status = 404
    code = "event-not-found"
    title = _("Event not found")


class InvalidEvent(DomainError):
    status = 400
    code = "invalid-event"
    title = _("The event is not valid")


class EventNotEditable(DomainError):
    status = 409
    code = "event-not-editable"
    title = _("The event can no longer be changed this way")


class InvalidVenuePlan(DomainError):
    """A plan description or CSV file that cannot be used; `problems` lists every problem
    found, each with its line number, so staff can fix them all in one go."""

    status = 400
    code = "invalid-venue-plan"
    title = _("The venue plan is not valid")

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        shown = self.problems[:20]
        more = len(self.problems) - len(shown)
        detail = " ".join(shown)
        if more > 0:
            detail += " " + ngettext(
                "(and %(count)d more problem)", "(and %(count)d more problems)", more
            ) % {"count": more}
        super().__init__(detail, problems=self.problems)


class VenuePlanInUse(DomainError):
    status = 409
    code = "venue-plan-in-use"
    title = _("The venue's plan is used by events")


class InvalidCategoryAssignment(DomainError):
    status = 400
    code = "invalid-category-assignment"
    title = _("The price categories cannot be assigned like this")


class VenuePlanSeatsInUse(InvalidVenuePlan):
    """A plan change that would take held or sold seats out of a sale: refused whole, with
    every problem found and `seats` naming the engine seats (e.g. "1-1-3") it is about."""

    status = 409
    code = "venue-plan-seats-in-use"
    title = _("Held or sold seats stay in the plan")

    def __init__(self, problems: Sequence[str], *, seats: Sequence[str]) -> None:
        super().__init__(problems)
        self.extra["seats"] = sorted(set(seats))


class VenuePlanChanged(DomainError):
    """The plan was saved since the editor read it (its version moved on): saving would
    overwrite that save unseen.  `planVersion` is the plan's version now."""

    status = 412
    code = "venue-plan-changed"
    title = _("The plan was changed since it was read")


class VenueNotFound(DomainError):
    status = 404
    code = "venue-not-found"
    title = _("Venue not found")


class PlanVersionRequired(DomainError):
    """A plan save without `If-Match`: it could overwrite a save it never saw."""

    status = 428
    code = "plan-version-required"
    title = _("Say which plan version the drawing was made on")
