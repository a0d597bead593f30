"""Migration operations for a database that keeps selling while it migrates."""

from __future__ import annotations

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db.migrations import AddIndex


class AddIndexWithoutBlockingWrites(AddIndexConcurrently):
    """`AddIndex` built with CREATE INDEX CONCURRENTLY on PostgreSQL, so a busy table (a
    bookings table mid-sale) keeps taking writes while the index builds; a plain `AddIndex`
    elsewhere (SQLite, the embedded mode, has no such syntax and no such traffic).  Like
    Django's own, its migration must be `atomic = False`.  A build that fails part-way on
    PostgreSQL leaves an INVALID index behind: drop it (DROP INDEX CONCURRENTLY) and migrate
    again."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)
