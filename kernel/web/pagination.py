"""One pagination for every list of the API: `limit` and `offset` in the query, and an RFC 8288
`Link` header with `rel="next"` while more follow (and `rel="prev"` after the first page).

Lists that answered a bare array keep answering one (no client breaks); `/api/bookings`
keeps its body (`count`, `next`, `previous`, `results`) and gains the same header.  A page
asks for one item more than it shows, so "is there a next page" costs no COUNT query.
"""

from __future__ import annotations

from dataclasses import dataclass

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.utils.urls import remove_query_param, replace_query_param

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_OFFSET = 10**6


class PageQuerySerializer(serializers.Serializer):
    limit = serializers.IntegerField(
        min_value=1,
        max_value=MAX_LIMIT,
        required=False,
        help_text=f"Items per page (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}).",
    )
    offset = serializers.IntegerField(
        min_value=0,
        max_value=MAX_OFFSET,
        required=False,
        help_text="Items to skip: the next page starts at `offset + limit` (follow `Link`).",
    )


@dataclass(frozen=True)
class Page:
    limit: int
    offset: int

    @property
    def stop(self) -> int:
        return self.offset + self.limit


def page_of(query_params, *, default_limit: int = DEFAULT_LIMIT) -> Page:
    """The page a list request asks for; a bad `limit` or `offset` is a 400 problem."""
    asked = {k: query_params[k] for k in ("limit", "offset") if k in query_params}
    if not asked:
        # The first page, as most searches ask: what the serializer gives for no data,
        # without making and validating it (a tenth of a cached search's CPU, issue 26).
        return Page(limit=default_limit, offset=0)
    data = PageQuerySerializer(data=asked)
    data.is_valid(raise_exception=True)
    return Page(
        limit=data.validated_data.get("limit", default_limit),
        offset=data.validated_data.get("offset", 0),
    )


def page_links(request, *, page: Page, has_more: bool) -> dict[str, str]:
    """The `Link` header of a page of the list `request` asked for; the request's absolute
    URL is worked out only when there is a link to write (most searches have none)."""
    if not has_more and page.offset <= 0:
        return {}
    url = request.build_absolute_uri()
    links = []
    if has_more:
        links.append(f'<{replace_query_param(url, "offset", page.stop)}>; rel="next"')
    if page.offset > 0:
        previous = max(0, page.offset - page.limit)
        prev_url = (
            replace_query_param(url, "offset", previous)
            if previous
            else remove_query_param(url, "offset")
        )
        links.append(f'<{prev_url}>; rel="prev"')
    return {"Link": ", ".join(links)}


LINK_HEADER = OpenApiParameter(
    "Link",
    str,
    OpenApiParameter.HEADER,
    response=[200],
    description='RFC 8288: `<url>; rel="next"` while more items follow, `rel="prev"` after '
    "the first page. Absent on a single page.",
)
PAGE_PARAMETERS = [PageQuerySerializer, LINK_HEADER]
