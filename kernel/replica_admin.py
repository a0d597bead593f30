"""Admin change lists read from the replica (kernel/replica.py): a list may lag by the bound,
and nothing is decided from it.  Only GET: a bulk action (POST) runs on the primary."""

from __future__ import annotations

from kernel import replica


class ChangeListFromReplica:
    """A ModelAdmin mixin (first in the bases)."""

    def changelist_view(self, request, extra_context=None):
        if request.method != "GET":
            return super().changelist_view(request, extra_context)
        with replica.reads_within_lag():
            response = super().changelist_view(request, extra_context)
            # A TemplateResponse evaluates its querysets when rendered: render in the block.
            if hasattr(response, "render") and not getattr(response, "is_rendered", True):
                response.render()
            return response
