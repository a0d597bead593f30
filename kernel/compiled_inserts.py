"""INSERTs of one new row, compiled to SQL once per process, as `kernel.compiled` does reads.

`Model.objects.create(**values)` compiles the same INSERT for every row of a model: the
column list, the placeholders, RETURNING.  On the pay request four such INSERTs (the payment,
the outbox event, the sandbox's charge and event) were ~2.9 of its ~18 profiled ms
(docs/performance.md, "Issue 26: one relay kick pending"), most of it Django building and
compiling an `InsertQuery` whose SQL text never changes.  `CompiledInsert` keeps `save()`'s
steps for a new row and only skips that compilation:

* the instance is built by the model's own `__init__` (so every field default is the one
  `save()` would write), its related fields are checked and copied as `save()` does
  (`_prepare_related_fields_for_save`), a primary key with a default gets it on save;
* each value is `field.pre_save(obj, add=True)` then `field.get_db_prep_save(...)`, as
  `SQLInsertCompiler` prepares it; RETURNING's columns go through the ORM's converters;
* `pre_save` and `post_save` are sent as `save_base` sends them (`create`), or not at all as
  `bulk_create` does (`bulk_create_one`); a write error inside a transaction marks it for
  rollback as `save_base` does.

The SQL is the ORM's own (`InsertQuery` compiled by the ORM's compiler the first time, per
alias and engine), so it is valid wherever the model is.  Refused when first compiled: a
model with parents or `order_with_respect_to`, a field with its own placeholder; refused at
run time: a value that is an expression (a `db_default`, an F()), whose SQL would differ.
tests/kernel/test_compiled_inserts.py compares the statements and rows with the ORM's.

A column whose value `pre_save` and `get_db_prep_save` would hand to the driver unchanged (a
`str` or None in a plain CharField or TextField, an aware `datetime` or None in a plain
DateTimeField where the backend adapts none, an `int` in an auto primary key or a ForeignKey to
one) is read straight off the instance: on the pay
request that was ~10 Python calls for each of ~40 such columns (`_plain_type`).  Any other
value, or a field that overrides one of those steps, takes the ORM's steps as before.

`ignore_conflicts=True` compiles the INSERT with the ORM's `OnConflict.IGNORE` (PostgreSQL:
ON CONFLICT DO NOTHING) and RETURNING: `create` then answers None when a unique constraint
already holds such a row, instead of raising IntegrityError into a savepoint.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db import connections, router, transaction
from django.db.models import (
    AutoField,
    BigAutoField,
    CharField,
    DateTimeField,
    Field,
    ForeignKey,
    Model,
    SmallAutoField,
    TextField,
)
from django.db.models.constants import OnConflict
from django.db.models.signals import post_save, pre_save
from django.db.models.sql import InsertQuery


class _Template(NamedTuple):
    sql: str
    fields: list  # the INSERT's columns, in order
    plain: list  # per column: the type it sends as it is, or None (`_plain_type`)
    returning: list  # the fields RETURNING reads back (the auto primary key)
    returning_params: tuple
    converters: list  # (position, (converters, expression)) of RETURNING's columns


class CompiledInsert:
    """`CompiledInsert(Model).create(**values)` is `Model.objects.create(**values)` without
    compiling the INSERT again."""

    def __init__(self, model: type[Model], *, ignore_conflicts: bool = False) -> None:
        meta = model._meta
        if meta.parents or meta.order_with_respect_to:
            raise TypeError(f"CompiledInsert: {model.__name__} saves more than one INSERT")
        for field in meta.local_concrete_fields:
            if getattr(field, "get_placeholder", None) is not None:
                raise TypeError(f"CompiledInsert: {field} has its own placeholder")
        self.model = model
        self._on_conflict = OnConflict.IGNORE if ignore_conflicts else None
        self._templates: dict[tuple, _Template] = {}

    def create(self, *, using: str | None = None, **values: Any) -> Model | None:
        """`Model.objects.create(**values)`: the saved instance, signals sent.  With
        `ignore_conflicts`, None when the row conflicts with one already there."""
        obj = self.model(**values)
        alias = using or router.db_for_write(self.model)
        return obj if self._save(obj, alias, signals=True, operation="save") else None

    def bulk_create_one(self, obj: Model, *, using: str | None = None) -> bool:
        """`Model.objects.bulk_create([obj])` of one instance: no signals, as bulk_create."""
        alias = using or router.db_for_write(self.model)
        return self._save(obj, alias, signals=False, operation="bulk_create")

    def together(
        self, obj: Model, then: CompiledInsert, then_obj: Model, *, using: str | None = None
    ) -> None:
        """`obj` inserted as `create` inserts it (signals sent), then `then_obj` as
        `then.bulk_create_one` inserts it, in one statement, `WITH ... AS (first) second`:
        atomic by itself, so outside a transaction one round trip instead of BEGIN, two
        INSERTs and COMMIT.  Both rows come with their primary keys (nothing is read back);
        a foreign key from the second to the first is checked at the end of the statement (or
        at commit: Django's are deferred).  `post_save` of `obj` comes after both rows are
        written.  PostgreSQL only (a data-modifying WITH)."""
        alias = using or router.db_for_write(self.model)
        connection = connections[alias]
        if connection.vendor != "postgresql":
            raise TypeError("CompiledInsert.together: a data-modifying WITH is PostgreSQL's")
        first, first_params = self._prepare(obj, connection, signals=True, operation="save")
        second, second_params = then._prepare(
            then_obj, connection, signals=False, operation="bulk_create"
        )
        if first.returning or second.returning or self._on_conflict or then._on_conflict:
            raise TypeError("CompiledInsert.together: rows with their keys, no conflicts")
        sql = f"WITH {connection.ops.quote_name('first')} AS ({first.sql}) {second.sql}"
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(sql, [*first_params, *second_params])
        then._finish(then_obj, alias, signals=False)
        self._finish(obj, alias, signals=True)

    def _save(self, obj: Model, alias: str, *, signals: bool, operation: str) -> bool:
        # Looked up once (each `connections[alias]` is an asgiref Local's lookup).
        connection = connections[alias]
        template, params = self._prepare(obj, connection, signals=signals, operation=operation)
        row = None
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(template.sql, params)
            if template.returning:
                row = connection.ops.fetch_returned_insert_columns(
                    cursor, template.returning_params
                )
        if template.returning:
            if row is None:  # ON CONFLICT DO NOTHING: nothing was written
                return False
            row = list(row)
            for position, (converters, expression) in template.converters:
                for converter in converters:
                    row[position] = converter(row[position], expression, connection)
            for value, field in zip(row, template.returning, strict=True):
                setattr(obj, field.attname, value)
        self._finish(obj, alias, signals=signals)
        return True

    def _prepare(
        self, obj: Model, connection, *, signals: bool, operation: str
    ) -> tuple[_Template, list]:
        """`save()`'s steps before its INSERT on `connection` (the alias's wrapper); the
        statement and its parameters."""
        alias = connection.alias
        cls = self.model
        meta = cls._meta
        obj._prepare_related_fields_for_save(operation_name=operation)
        if signals:
            pre_save.send(sender=cls, instance=obj, raw=False, using=alias, update_fields=None)
        if not obj._is_pk_set(meta):
            setattr(obj, meta.pk.attname, meta.pk.get_pk_value_on_save(obj))
        template = self._template(connection, obj._is_pk_set(meta))
        params = []
        for field, plain in zip(template.fields, template.plain, strict=True):
            if plain is not None:
                value = getattr(obj, field.attname)  # `Field.pre_save`
                # A naive datetime is made aware (with a warning) by the ORM's steps.
                if value is None or (
                    type(value) is plain
                    and (plain is not datetime or value.utcoffset() is not None)
                ):
                    params.append(value)
                    continue
            else:
                value = field.pre_save(obj, True)
            if hasattr(value, "resolve_expression"):
                raise TypeError(f"CompiledInsert: {field} is an expression ({value!r})")
            params.append(field.get_db_prep_save(value, connection=connection))
        params.extend(template.returning_params)
        return template, params

    def _finish(self, obj: Model, alias: str, *, signals: bool) -> None:
        """`save()`'s steps after its INSERT."""
        obj._state.db = alias
        obj._state.adding = False
        if signals:
            post_save.send(
                sender=self.model,
                instance=obj,
                created=True,
                update_fields=None,
                raw=False,
                using=alias,
            )

    def _template(self, connection, pk_set: bool) -> _Template:
        key = (connection.alias, connection.settings_dict["ENGINE"], pk_set)
        found = self._templates.get(key)
        if found is None:
            found = self._templates.setdefault(key, self._compile(connection.alias, pk_set))
        return found

    def _compile(self, alias: str, pk_set: bool) -> _Template:
        """What `Model._save_table` hands the ORM for a new row, compiled by the ORM (with a
        blank instance: the SQL does not depend on plain values, and a caller's instance
        must not see `pre_save` twice)."""
        meta = self.model._meta
        fields = [
            f
            for f in meta.local_concrete_fields
            if not f.generated and (pk_set or f is not meta.auto_field)
        ]
        returning = list(meta.db_returning_fields)
        if self._on_conflict is not None and not returning:
            raise TypeError("CompiledInsert: ignore_conflicts needs RETURNING to tell")
        obj = self.model()
        if pk_set and not obj._is_pk_set(meta):
            obj.pk = 1
        query = InsertQuery(self.model, on_conflict=self._on_conflict)
        query.insert_values(fields, [obj])
        compiler = query.get_compiler(using=alias)
        connection = compiler.connection
        if returning and not connection.features.can_return_columns_from_insert:
            raise TypeError(f"CompiledInsert: {connection.vendor} cannot return columns")
        compiler.returning_fields = returning
        [(sql, params)] = compiler.as_sql()
        returning_params = tuple(compiler.returning_params)
        if len(params) != len(fields) + len(returning_params):
            raise TypeError(f"CompiledInsert: not one plain parameter per column in {sql}")
        columns = [field.get_col(meta.db_table) for field in returning]
        converters = list(compiler.get_converters(columns).items())
        plain = [_plain_type(field, connection) for field in fields]
        return _Template(sql, fields, plain, returning, returning_params, converters)


# The steps between an instance's attribute and the driver: a field class that keeps all of
# these as its plain base class has them sends the values `_plain_type` names unchanged.
_STEPS = ("pre_save", "get_db_prep_save", "get_db_prep_value", "get_prep_value", "to_python")
_AWARE = datetime(2000, 1, 1, tzinfo=UTC)


def _plain_type(field: Field, connection) -> type | None:
    """The type whose values (and None) `field.pre_save(obj, add=True)` then
    `field.get_db_prep_save(value, connection)` return unchanged, read from Django's own
    steps: a CharField's or TextField's `str` (`to_python` keeps a `str`); a DateTimeField's
    aware `datetime` when it sets no time of its own (`auto_now`) and the backend adapts it
    as it is (PostgreSQL); an auto primary key's `int` (`int(value)`, and a backend that
    checks none: `validate_autopk_value`), and so a ForeignKey's to one.  None for any other
    field: it takes the ORM's steps."""
    if isinstance(field, ForeignKey):
        # Its steps hand the value to its target's; an int (never "", which it may send as
        # NULL) goes to an auto primary key's as it is.
        if not _keeps_steps_of(type(field), ForeignKey, ("pre_save", "get_db_prep_save")):
            return None
        return int if _plain_type(field.target_field, connection) is int else None
    kind = next((k for base, k in _PLAIN if _keeps_steps_of(type(field), base)), None)
    if kind is int and connection.ops.validate_autopk_value(_NUMBER) is not _NUMBER:
        return None
    if kind is datetime and (
        field.auto_now
        or field.auto_now_add
        or connection.ops.adapt_datetimefield_value(_AWARE) is not _AWARE
        or connection.ops.adapt_datetimefield_value(None) is not None
    ):
        return None
    return kind


_PLAIN = (
    (CharField, str),
    (TextField, str),
    (DateTimeField, datetime),
    (AutoField, int),
    (BigAutoField, int),
    (SmallAutoField, int),
)
_NUMBER = 10**12


def _keeps_steps_of(cls: type, base: type, steps: tuple = _STEPS) -> bool:
    """`cls` is `base` or a subclass overriding none of `_STEPS`, with no mixin between them
    (the `super()` calls in `base`'s steps reach `base`'s own bases)."""
    mro = cls.__mro__
    return (
        base in mro
        and mro[mro.index(base) :] == base.__mro__
        and all(getattr(cls, step) is getattr(base, step) for step in steps)
    )
