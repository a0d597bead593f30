"""Django's PostgreSQL backend with a health check that costs no round trip while the server
has said nothing (ENGINE "kernel.database_backend", set by config/settings/database.py).

With CONN_HEALTH_CHECKS Django sends `SELECT 1` before the first query of every request on a
reused connection, so that a connection the server has dropped (a restart, a failover,
`pg_terminate_backend`, an idle timeout) is replaced instead of failing the request.  That is
one round trip and a cursor per request, a whole statement beside a hold's one (issue 26).

A server that ends a connection tells the client first or closes the socket: a FATAL
ErrorResponse, or EOF, or a reset.  Each makes the socket readable.  Between requests a
healthy connection has nothing to read, because every answer was read to its end.  So the
check asks the socket (a poll that does not wait) and sends Django's `SELECT 1` only when
something is there (or the socket cannot be asked); a notice or a notification that happens to be
waiting costs the `SELECT 1`, as before, never a failed request.

What it cannot see is what the server never sent: a network path that died silently shows
nothing on the socket, and `SELECT 1` would hang on it just the same (until TCP keepalives or
the connect options' timeouts give up).
"""

from __future__ import annotations

import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper


class DatabaseWrapper(PostgresDatabaseWrapper):
    def close_if_health_check_failed(self) -> None:
        if self.connection is None or not self.health_check_enabled or self.health_check_done:
            return
        if server_said_nothing(self.connection):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()  # SELECT 1; closed if that fails


def server_said_nothing(connection) -> bool:
    """Whether the psycopg `connection`'s socket has nothing to read, nor a hang-up or an
    error on it, right now (no waiting)."""
    try:
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except Exception:  # a closed connection, a bad descriptor: let SELECT 1 decide
        return False
