"""The hooks' work on a cached read, done once per request shape and then replayed (issue 26).

`CachedReadMiddleware` (config/cached_reads.py) answers a warm seat map through the
hook-style middlewares' own `process_request` / `process_response` (sessions, the host check,
the locale, the security headers...).  For such a read they always do the same thing: add
the same headers in the same order, patch `Vary`, activate the same language.  Run for every
request they were about a third of the fast path's cost.  `HookReplay` runs them for real
the first time a request shape meets them, records what they did to the answer, and from
then on applies that record to the view's answer.

**The shape is every input the hooks read**, found by watching them, not by a list kept by
hand.  While they run for a recording, `request.META` (which is also `request.environ`:
the host, the scheme, X-Forwarded-Proto, Accept-Language, the cookies...) is a `TracedMeta`
that notes each key they look at and what it held, absent included.  A later request with
the same path and the same values at those keys makes the hooks read exactly the same
things (by induction over their steps: each read gives the same value, so the next step is
the same), so they would do the same again.  The rest of what they read: the path (in the
key), the settings (records are dropped on `setting_changed`), and the answer before them:
its status and its headers bar the ETag (in the key), and its length (`Content-Length`,
computed, never replayed).  They read nothing else: `REVIEWED` names the classes read for
that; another hook in the chain turns replay off at load, and the hooks then run as before.

A run is not recorded (the hooks simply answer, as before) when it reads the whole META
(e.g. builds `request.headers`) or writes it, sets a cookie, changes the status or the body,
answers without the view (the SSL redirect, a host we do not serve: 301 and 400 always take
the hooks), or changes anything else on the response.  At most `MAX_SHAPES` request shapes are
kept, the oldest dropped first.  tests/api/test_hook_replay.py sends every shape twice
(record, replay) and compares both with the long way, with controls that break the key.

**A 304 is kept finished** (target e: a 304 cheaper than a 200).  Given `bare`, a callback
that names what alone decides a bodiless answer (for a cached read's 304: the view and the
ETag, config/cached_reads.py `_bare`), the answer a replay finished is kept per (request
shape, that key), and the next such request gets a fresh instance of its class with those
headers (`finish`), without the view's answer, the record's lookup or the replay: the same
inputs, so the same answer.  Only an answer that is its class's fresh instance but for its
headers is kept (`_bare_like`: no body, cookie or closer); at most `MAX_FINISHED`, the
oldest dropped first, all forgotten with the records.  tests/api/test_kept_304.py.
"""

from __future__ import annotations

import contextlib
import logging
import weakref

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.signals import setting_changed
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.middleware.security import SecurityMiddleware
from django.utils import translation

from config.lean_chain import MergedHooks
from languages.middleware import LocaleMiddleware, PreferredLanguageMiddleware

logger = logging.getLogger(__name__)

# The hook-style middlewares whose reads are all covered above: META (traced), the path,
# the settings, the answer's status, headers and length.
REVIEWED = (
    SecurityMiddleware,
    SessionMiddleware,
    CommonMiddleware,
    CsrfViewMiddleware,
    AuthenticationMiddleware,
    LocaleMiddleware,
    PreferredLanguageMiddleware,
    XFrameOptionsMiddleware,
)
MAX_SHAPES = 512  # request shapes kept per process (path x the hooks' META inputs), newest
MAX_FINISHED = 512  # bodiless answers kept (a shape x a 304's ETag), newest


def ignored_reads() -> frozenset:
    """META keys a reviewed hook reads whose value cannot change what it does under the
    settings of the moment: CommonMiddleware reads User-Agent for DISALLOWED_USER_AGENTS
    only (without any, every client would otherwise be a shape of its own)."""
    return frozenset() if settings.DISALLOWED_USER_AGENTS else _USER_AGENT


_USER_AGENT = frozenset({"HTTP_USER_AGENT"})

ABSENT = object()  # a META key the hooks asked for that the request did not have
FROM_ANSWER = object()  # a header the answer had, unchanged by the hooks
LENGTH = object()  # Content-Length: the answer's own length

_replays: weakref.WeakSet = weakref.WeakSet()  # for `setting_changed`


class TracedMeta(dict):
    """`request.META` while the hooks are recorded: each key read, with what it held."""

    def __init__(self, meta):
        super().__init__(meta)
        self.read: dict = {}
        self.spoilt = False  # read as a whole, or written: not a run to replay

    def _note(self, key):
        if key not in self.read:
            self.read[key] = dict.get(self, key, ABSENT)

    def __getitem__(self, key):
        self._note(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._note(key)
        return dict.get(self, key, default)

    def __contains__(self, key):
        self._note(key)
        return dict.__contains__(self, key)


def _spoiling(name):
    method = getattr(dict, name)

    def spoil(self, *args, **kwargs):
        self.spoilt = True
        return method(self, *args, **kwargs)

    return spoil


# The dict methods that read all of it or change it.
WHOLE = (
    "keys items values copy pop popitem setdefault update clear __setitem__ __delitem__ __iter__"
    " __len__ __eq__ __ne__ __or__ __ior__ __reversed__ __repr__"
)
for _name in WHOLE.split():
    setattr(TracedMeta, _name, _spoiling(_name))


class HookReplay:
    """The hooks around `answer` for a cached read, replayed where a record fits."""

    def __init__(self, hooks: list, answer, bare=None):
        self.answer = answer
        # `bare(request)`: for an answer without a body that `answer` gives alike to every
        # request with the same key (which it returns; None for any other answer), having
        # noted on `request` what `answer` would; its finished answers are then kept.
        self.bare = bare
        self.hooks = hooks
        self.on = all(isinstance(h, REVIEWED) for h in hooks)
        self.merged = MergedHooks(hooks, self._answer_seen if self.on else answer)
        if not self.on:
            logger.warning("cached reads: a hook not reviewed for replay; the hooks run")
        self.fields: list[tuple] = []  # the META keys of each record's reads, distinct
        self.records: dict = {}  # (path, path_info, fields, values) -> {answer key: record}
        self.interned: dict = {}  # one copy of each record
        self.finished: dict = {}  # (records' key, bare key) -> the answer as `finish` gives it
        _replays.add(self)

    def __call__(self, request):
        if not self.on:
            return self.merged(request)
        meta = request.META
        shape = None
        for fields in self.fields:
            key = (
                request.path,
                request.path_info,
                fields,
                tuple(meta.get(f, ABSENT) for f in fields),
            )
            shape = self.records.get(key)
            if shape is not None:
                break
        if shape is not None:
            bare = self.bare(request) if self.bare is not None else None
            if bare is not None:
                done = self.finished.get((key, bare))
                if done is not None:
                    return finish(done)
            response = self.answer(request)
            record = shape.get(answer_key(response))
            if record is not None:
                response = replay(record, response)
                if bare is not None:
                    self.keep((key, bare), response, record)
                return response
            request.resolver_match = None  # as before the answer: the hooks run from the top
        return self.record(request)

    def keep(self, key, response, record) -> None:
        """The replayed bodiless answer, finished, for `finish` to give the next request of
        the same shape whose answer has the same `bare` key; kept only if the answer is a
        fresh instance of its class but for its headers (nothing else to copy)."""
        if not _bare_like(response):
            return
        if key not in self.finished and len(self.finished) >= MAX_FINISHED:
            with contextlib.suppress(KeyError, RuntimeError, StopIteration):  # as for records
                del self.finished[next(iter(self.finished))]
        self.finished[key] = (type(response), tuple(response.headers._store.items()), record[1])

    def _answer_seen(self, request):
        traced = request.META
        request.META = request.environ = request._untraced_meta  # the view's reads are its own
        try:
            response = self.answer(request)
        finally:
            request.META = request.environ = traced
        request._answer_before_hooks = Before(response)
        return response

    def record(self, request):
        traced = TracedMeta(request.META)
        meta = request._untraced_meta = request.META
        request.META = request.environ = traced  # one dict in a WSGIRequest
        try:
            response = self.merged(request)
        finally:
            request.META = request.environ = meta
            if traced.spoilt:  # what the hooks wrote stays written
                meta.clear()
                meta.update(dict.items(traced))
        before = getattr(request, "_answer_before_hooks", None)
        if before is None or traced.spoilt:
            return response
        record = before.record_of(response, request)
        if record is not None:
            read = {k: v for k, v in traced.read.items() if k not in ignored_reads()}
            fields = tuple(read)
            if fields not in self.fields:
                self.fields.append(fields)
            key = (request.path, request.path_info, fields, tuple(read.values()))
            if key not in self.records and len(self.records) >= MAX_SHAPES:
                # The oldest shape.  Another HTTP thread may record or drop one meanwhile
                # (the dict changes under `iter`, or the key is gone): then it made room.
                with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                    del self.records[next(iter(self.records))]
            record = self.interned.setdefault(record, record)
            self.records.setdefault(key, {})[before.key] = record
        return response

    def forget(self):
        self.finished.clear()
        self.fields.clear()
        self.records.clear()
        self.interned.clear()


def answer_key(response) -> tuple:
    """What the hooks may read of the view's answer: its status and headers bar the ETag
    (no hook reads it; the replay takes it from the answer)."""
    return (
        response.status_code,
        tuple(item for lower, item in response.headers._store.items() if lower != "etag"),
    )


class Before:
    """The view's answer as the hooks met it."""

    def __init__(self, response):
        self.response = response
        self.key = answer_key(response)
        self.headers = dict(response.headers._store)
        self.attributes = dict(vars(response))
        self.content = response.content

    def record_of(self, response, request):
        """(headers, language) as the hooks left them, or None if not a run to replay."""
        session = getattr(request, "session", None)
        if (
            response is not self.response
            or response.status_code != self.key[0]
            or vars(response).keys() != self.attributes.keys()
            or any(vars(response)[k] is not v for k, v in self.attributes.items())
            or response.cookies
            or response.streaming
            or response.content != self.content
            or (session is not None and session.modified)
        ):
            return None
        headers = []
        for lower, (name, value) in response.headers._store.items():
            if self.headers.get(lower) == (name, value):
                headers.append((lower, name, FROM_ANSWER))
            elif lower == "content-length" and value == str(len(self.content)):
                headers.append((lower, name, LENGTH))
            else:
                headers.append((lower, name, value))
        return tuple(headers), translation.get_language()


def replay(record, response):
    """The answer as the hooks would leave it."""
    headers, language = record
    before = response.headers._store
    after = {}
    for lower, name, value in headers:
        if value is FROM_ANSWER:
            after[lower] = before[lower]
        elif value is LENGTH:
            after[lower] = (name, str(len(response.content)))
        else:
            after[lower] = (name, value)
    response.headers._store = after
    if translation.get_language() != language:
        translation.activate(language)  # the thread's language, as LocaleMiddleware leaves it
    return response


def finish(done):
    """A kept bodiless answer (`HookReplay.keep`), as the view and the hooks' replay leave it."""
    cls, headers, language = done
    response = cls()
    response.headers._store = dict(headers)
    if translation.get_language() != language:
        translation.activate(language)
    return response


def _bare_like(response) -> bool:
    """Whether `response` is `finish`'s, headers aside: no body, no cookie, nothing else."""
    fresh = type(response)()
    return (
        not response.streaming
        and response.content == b""
        and {k: v for k, v in vars(response).items() if k != "headers"}
        == {k: v for k, v in vars(fresh).items() if k != "headers"}
    )


def _forget_all(**kwargs):
    for each in _replays:
        each.forget()


setting_changed.connect(_forget_all, dispatch_uid="config.hook_replay")
