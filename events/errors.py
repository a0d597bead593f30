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
