"""Which waiting room is in front of a sale, asked on every hold, answered from the cache.

`require_admission` (waitroom/gate.py) needs to know, before every hold, whether the sale
has a waiting room.  That answer changes only when staff create, move or delete a room,
so it is kept in the cache (Redis) per sale, tagged with the *protection generation*: a
random value that every saved or deleted `WaitingRoom` replaces, at once and again after
its commit.  An entry counts only while its tag is the current generation, so:

* a change retires every cached answer at once (one key written, whatever the number of
  sales cached);
* a reader that looked at the database before a change committed and stores its (old) answer
  after the change's invalidation stored it under the generation it read *before* its query,
  which the change has replaced by then: the entry is dead on arrival.  A stale "unprotected"
  answer would let holds past the waiting room at the very on-sale moment it exists for;
* with Redis down (the cache ignores its errors) every hold asks the database, as before.
  An invalidation lost to a Redis error while the reads around it worked is outlived by
  `CACHE_SECONDS`, the entries' lifetime.

A `QuerySet.update()` of `sale` sends no signal; nothing in the project does one
(the admin and `waitroom.staff` save instances).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from kernel import redis_clients
from waitroom.models import WaitingRoom
from waitroom.room_selectors import room_of_sale

GENERATION_KEY = "waitroom:protection:generation"
_ONE_REDIS_CACHE = "django_redis.cache.RedisCache"
_CLUSTER_CACHE = "kernel.cluster_cache.ClusterCache"
CACHE_SECONDS = 10
_NONE = 0  # "not protected" as a cacheable value (sale ids start at 1)


def _entry_key(sale_id: int) -> str:
    # The sale's tag: on a cluster the entry sits on the sale's slot, beside its hold filters'
    # keys, so it rides in their script's round trip (`read_keys`).
    return f"waitroom:protection:sale:{redis_clients.sale_tag(sale_id)}"


def cached_room_of_sale(*, sale_id: int, read: list[bytes | None] | None = None) -> int | None:
    """`room_of_sale`, from the cache while the protection generation holds:
    one Redis round trip instead of a query on the hot path.  `read`: the raw values of
    `read_keys` already read (in the hold filters' round trip), not read again."""
    key = _entry_key(sale_id)
    if read is None:
        found = cache.get_many([GENERATION_KEY, key])
        generation, entry = found.get(GENERATION_KEY), found.get(key)
    else:
        backend = caches[DEFAULT_CACHE_ALIAS]  # one lookup of the context's cache for both
        generation, entry = (redis_clients.decode_cache_entry(raw, backend=backend) for raw in read)
    if generation is not None and entry is not None and entry[0] == generation:
        return entry[1] or None
    # Read the generation *before* the database (above): see the module docstring.
    room_id = room_of_sale(sale_id=sale_id)
    if generation is None:
        generation = uuid.uuid4().hex
        if not cache.add(GENERATION_KEY, generation, timeout=None):
            return room_id  # someone else started one meanwhile: do not guess which
    cache.set(key, (generation, room_id or _NONE), CACHE_SECONDS)
    return room_id


def read_keys(*, sale_id: int) -> list[str] | None:
    """The full keys `cached_room_of_sale` reads, when they may ride in the hold filters'
    round trip (bookings.admission_reads): the cache is on the very Redis (or Redis Cluster)
    of the filters.  None otherwise (another server, the embedded cache).  On a cluster the
    entry shares the sale's slot and the generation is on its own: one pipeline, one round
    trip per node."""
    filters, default = settings.HOLD_FILTERS, settings.CACHES["default"]
    backend = _CLUSTER_CACHE if filters.get("REDIS_CLUSTER") else _ONE_REDIS_CACHE
    if (
        default.get("BACKEND") != backend
        or not filters.get("REDIS_URL")
        or default.get("LOCATION") != filters["REDIS_URL"]
    ):
        return None
    backend = caches[DEFAULT_CACHE_ALIAS]  # one lookup of the context's cache for both
    return [backend.make_key(GENERATION_KEY), backend.make_key(_entry_key(sale_id))]


def forget_protections() -> None:
    """Retire every cached answer now and again once the current transaction commits (a
    reader between the two may have stored what it read before the commit)."""

    def bump() -> None:
        cache.set(GENERATION_KEY, uuid.uuid4().hex, timeout=None)

    bump()
    transaction.on_commit(bump)


# What a cached answer is made of; a save that names only other fields (the admission tick
# saves its clock every few seconds) changes no answer.
_ANSWER_FIELDS = frozenset({"sale", "sale_id"})


def _on_room_saved(sender, instance: WaitingRoom, update_fields=None, **kwargs) -> None:
    if update_fields is None or _ANSWER_FIELDS & set(update_fields):
        forget_protections()


def _on_room_deleted(sender, instance: WaitingRoom, **kwargs) -> None:
    forget_protections()


def connect_protection_cache_invalidation() -> None:
    """Called once from `waitroom.apps.WaitroomConfig.ready`.  `post_delete` also fires for
    a room deleted along with its sale (CASCADE)."""
    post_save.connect(_on_room_saved, sender=WaitingRoom, dispatch_uid="protection-cache-save")
    post_delete.connect(_on_room_deleted, sender=WaitingRoom, dispatch_uid="protection-cache-del")
