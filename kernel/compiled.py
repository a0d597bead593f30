"""ORM reads of a fixed shape, compiled to SQL once per database connection.

The hot paths read the same few querysets on every request, differing only in a key or two
(the fare class's inventory row of a hold, a token's user).  Compiling such a queryset (the
joins of `select_related`, the column list, the WHERE clause) was a fifth of a hold's Python
time (docs/performance.md, "Issue 26: CPU per request, second pass"), and it gives the same
SQL every time.  `CompiledRead` builds the queryset once with sentinel values, lets Django
compile it, remembers where each sentinel landed among the parameters, and from then on only
binds new values and turns rows into model instances by `ModelIterable`'s own steps (Django's
field converters, `from_db` and the `select_related` populators), with what that loop works
out per query (the converters, the column positions, the populators) worked out once too
(docs/performance.md, "Issue 26: the winning hold's answer").
tests/kernel/test_compiled_reads.py compares every field of every instance with the ORM's.

`rows` answers a `values_list()` queryset's tuples the same way.

Only plain int and str parameters of simple lookups (`exact`): anything else, and any
queryset whose parameters do not contain each sentinel exactly once, is refused when first
compiled (a test-time error, not a silent wrong query).  The SQL is the ORM's own, so it is
valid on every backend the queryset is.  It is compiled once per process (per alias and
engine); each connection (per thread, per alias) keeps its own copy of the compiler, bound to
it, and drops it with it.

A queryset whose shape depends on something besides its values (the hold's read joins every
registered catalogue's owner) names that in `shape`: a callable whose answer keys the compiled
SQL, so a catalogue registered later, or swapped in by a test, compiles a new read instead of
reusing one that joins the wrong tables.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

from django.db import connections, router
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, ValuesListIterable, get_related_populators

_ATTR = "_seatkeeper_compiled_reads"
# Values no caller passes: ints inside a 32-bit column's range (Django turns an out-of-range
# exact lookup into an empty result, which would hide the parameter), strings with a control
# character.
_INT_SENTINEL = 2_000_000_011
_STR_SENTINEL = "\x1fcompiled-read-sentinel-"


class _Instances:
    """`ModelIterable.__iter__`'s loop for one compiled query (django.db.models.query), with
    its per-query setup done once: the converters of the selected columns, where the model's
    own columns are, and the `select_related` populators (which keep no state between rows).
    No known related objects: a compiled read is never a related manager's queryset."""

    __slots__ = (
        "alias",
        "annotations",
        "connection",
        "converters",
        "end",
        "init_list",
        "model",
        "related",
        "start",
    )

    def __init__(self, compiler, alias: str) -> None:
        fields = [s[0] for s in compiler.select[0 : compiler.col_count]]
        if compiler.has_composite_fields(fields):
            raise ValueError("CompiledRead: composite fields are not supported")
        self.converters = list(compiler.get_converters(fields).items())
        klass_info = compiler.klass_info
        self.model = klass_info["model"]
        select_fields = klass_info["select_fields"]
        self.start, self.end = select_fields[0], select_fields[-1] + 1
        self.init_list = [f[0].target.attname for f in compiler.select[self.start : self.end]]
        self.related = get_related_populators(klass_info, compiler.select, alias)
        self.annotations = list(compiler.annotation_col_map.items())
        self.connection = compiler.connection
        self.alias = alias

    def __call__(self, row: Sequence[Any]) -> Model:
        row = list(row)
        for position, (converters, expression) in self.converters:
            value = row[position]
            for converter in converters:
                value = converter(value, expression, self.connection)
            row[position] = value
        instance = self.model.from_db(self.alias, self.init_list, row[self.start : self.end])
        for populator in self.related:
            populator.populate(row, instance)
        for name, position in self.annotations:
            setattr(instance, name, row[position])
        return instance


class _Compiled:
    __slots__ = (
        "compiler",
        "instances",
        "iterable",
        "params",
        "plain_rows",
        "slots",
        "sql",
        "width",
    )

    def __init__(
        self, compiler, alias: str, sql: str, params: list, slots: dict[int, str], iterable: type
    ) -> None:
        self.compiler = compiler
        self.iterable = iterable
        self.sql = sql
        self.params = params
        self.slots = slots
        self.width = len(compiler.select)
        self.instances = _Instances(compiler, alias) if iterable is ModelIterable else None
        # A values_list() read whose columns need no converter and carry no extra select:
        # `results_iter` would hand back the driver's rows untouched, so `rows` reads them
        # straight from the cursor, without the compiler's iterator machinery.
        self.plain_rows = iterable is ValuesListIterable and _no_conversion(compiler)


def _no_conversion(compiler) -> bool:
    fields = [s[0] for s in compiler.select[0 : compiler.col_count]]
    return not compiler.has_extra_select and not compiler.get_converters(fields)


class _Template(NamedTuple):
    """A compiled read before any connection: its compiler (connection None), SQL,
    parameters with the sentinels' places, and the iterable it answers for."""

    compiler: Any
    sql: str
    params: list
    slots: dict[int, str]
    iterable: type


class CompiledRead:
    """`build(**values)` returns the queryset of `model` (already ordered and sliced as
    wanted); `types` names each value's type (int or str).  `CompiledRead(...).list(**values)`
    is `list(build(**values))` without compiling it again, read from the database the router
    names for `model` at the time (the replica outside transactions, when it is on)."""

    def __init__(
        self,
        model: type[Model],
        build: Callable[..., QuerySet],
        *,
        shape: Callable[[], Hashable] | None = None,
        **types: type,
    ) -> None:
        for name, kind in types.items():
            if kind not in (int, str):
                raise TypeError(f"CompiledRead: {name} must be int or str, not {kind}")
        self._model = model
        self._build = build
        self._shape = shape
        self._types = types
        self._templates: dict[Hashable, _Template] = {}

    def _sentinels(self) -> dict[str, Any]:
        values = {}
        for index, (name, kind) in enumerate(self._types.items()):
            values[name] = _INT_SENTINEL + index if kind is int else f"{_STR_SENTINEL}{index}"
        return values

    def _compile(self, alias: str) -> _Template:
        sentinels = self._sentinels()
        queryset = self._build(**sentinels)
        if queryset.model is not self._model:
            raise TypeError(f"CompiledRead: built a {queryset.model}, not a {self._model}")
        if queryset._iterable_class not in (ModelIterable, ValuesListIterable):
            raise TypeError(f"CompiledRead: {queryset._iterable_class.__name__} is not supported")
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        params = list(params)
        slots: dict[int, str] = {}
        for name, value in sentinels.items():
            found = [i for i, p in enumerate(params) if type(p) is type(value) and p == value]
            if len(found) != 1:
                raise ValueError(f"CompiledRead: {name} is not one plain parameter of {sql}")
            slots[found[0]] = name
        compiler.connection = None  # a template: each connection binds a copy of its own
        return _Template(compiler, sql, params, slots, queryset._iterable_class)

    def _compiled(self, alias: str) -> _Compiled:
        key = self if self._shape is None else (self, self._shape())
        # Kept on the connection wrapper (one per thread and alias): a compiler is bound to
        # its connection, so each thread binds its own once.  Keyed by the read itself, not
        # its id(): the key keeps it alive, so a read made and dropped (a test's) can never
        # leave its binding to a later read that CPython gives the same address.
        connection = connections[alias]
        cache = connection.__dict__.get(_ATTR)
        if cache is None:
            cache = connection.__dict__[_ATTR] = {}
        found = cache.get(key)
        if found is None:
            found = cache[key] = self._bind(key, alias, connection)
        return found

    def _bind(self, key: Hashable, alias: str, connection) -> _Compiled:
        """The read for one connection: compiled once per process (per alias and engine), by
        the first thread that asks, and bound to each further connection as a copy of that
        compiler.  Compiling was most of a web thread's first hold (~2.5 ms of CPU, with the
        process's other threads waiting on the GIL at the start of a sale: docs/performance.md,
        "Issue 26: warm connections"); the SQL, its parameters and the selected columns are
        the same on every connection of an alias."""
        where = (key, alias, connection.settings_dict["ENGINE"])
        template = self._templates.get(where)
        if template is None:
            template = self._templates.setdefault(where, self._compile(alias))
        compiler = copy.copy(template.compiler)
        compiler.connection = connection
        return _Compiled(
            compiler, alias, template.sql, template.params, template.slots, template.iterable
        )

    def list(self, *, using: str | None = None, **values: Any) -> list[Model]:
        alias = using or router.db_for_read(self._model)
        compiled = self._compiled(alias)
        if compiled.iterable is not ModelIterable:
            raise TypeError("CompiledRead.list: a values_list() queryset answers rows()")
        with connections[alias].cursor() as cursor:
            cursor.execute(compiled.sql, self._bound(compiled, values))
            rows = cursor.fetchall()
        return [compiled.instances(row) for row in rows]

    def rows(self, *, using: str | None = None, **values: Any) -> list[tuple]:
        """`list(build(**values))` of a `values_list()` queryset (not flat, not named): its
        tuples, through the ORM's own converters (`results_iter`, as `ValuesListIterable`)."""
        alias = using or router.db_for_read(self._model)
        compiled = self._compiled(alias)
        if compiled.iterable is not ValuesListIterable:
            raise TypeError("CompiledRead.rows: only a values_list() queryset has rows")
        params = self._bound(compiled, values)
        if compiled.plain_rows:
            with connections[alias].cursor() as cursor:
                cursor.execute(compiled.sql, params)
                return [tuple(row) for row in cursor.fetchall()]
        compiler = compiled.compiler
        sql = compiled.sql
        compiler.as_sql = lambda *args, **kwargs: (sql, params)
        return list(compiler.results_iter(tuple_expected=True))

    def returned_rows(self, sql: str, params: Sequence[Any], *, using: str) -> list[tuple]:
        """The rows of `sql`, a statement that answers this `values_list()` read's columns in
        its order (an UPDATE ... RETURNING them), through the read's converters as `rows`."""
        compiled = self._compiled(using)
        if compiled.iterable is not ValuesListIterable:
            raise TypeError("CompiledRead.returned_rows: only a values_list() read has rows")
        compiler = compiled.compiler
        compiler.as_sql = lambda *args, **kwargs: (sql, list(params))
        return list(compiler.results_iter(tuple_expected=True))

    def returned(self, sql: str, params: Sequence[Any], *, using: str) -> list[Model]:
        """The instances of `sql`, a statement that answers this read's columns in its order
        (an UPDATE ... RETURNING them), made as `list` makes the read's."""
        compiled = self._compiled(using)
        if compiled.iterable is not ModelIterable:
            raise TypeError("CompiledRead.returned: a values_list() read answers returned_rows()")
        with connections[using].cursor() as cursor:
            cursor.execute(sql, list(params))
            rows = cursor.fetchall()
        return [compiled.instances(row) for row in rows]

    def beside(
        self, call_sql: str, call_params: Sequence[Any], *, using: str, **values: Any
    ) -> tuple[tuple, Model | None]:
        """One statement: the set-returning call `call_sql` (one row) with this read beside it
        (`LEFT JOIN LATERAL`), on `using`.  Returns the call's columns and the read's first
        instance (None when the read finds no row).  The read sees the statement's snapshot,
        taken before the call runs; PostgreSQL only."""
        compiled = self._compiled(using)
        sql, params = self._beside_sql(compiled, call_sql, call_params, values)
        with connections[using].cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        head, tail = row[: compiled.width], tuple(row[compiled.width :])
        if head[0] is None:  # the read's first column is its primary key
            return tail, None
        return tail, compiled.instances(head)

    def beside_sql(
        self, call_sql: str, call_params: Sequence[Any], *, using: str, **values: Any
    ) -> tuple[str, list]:
        """`beside`'s statement and parameters, unrun (a connection's warm-up runs them)."""
        return self._beside_sql(self._compiled(using), call_sql, call_params, values)

    def _beside_sql(
        self, compiled: _Compiled, call_sql: str, call_params: Sequence[Any], values: dict
    ) -> tuple[str, list]:
        sql = (
            f"SELECT q.*, h.* FROM {call_sql} AS h LEFT JOIN LATERAL ({compiled.sql}) AS q ON TRUE"
        )
        return sql, [*call_params, *self._bound(compiled, values)]

    def sql(self, *, using: str, **values: Any) -> tuple[str, list]:
        """The read's statement and parameters, unrun (a connection's warm-up runs them)."""
        compiled = self._compiled(using)
        return compiled.sql, self._bound(compiled, values)

    def _bound(self, compiled: _Compiled, values: dict[str, Any]) -> list:
        if values.keys() != self._types.keys():
            raise TypeError(f"CompiledRead: expected {sorted(self._types)}, got {sorted(values)}")
        params = list(compiled.params)
        for position, name in compiled.slots.items():
            params[position] = self._types[name](values[name])
        return params

    def first(self, *, using: str | None = None, **values: Any) -> Model | None:
        rows = self.list(using=using, **values)
        return rows[0] if rows else None
