"""Django's PostgreSQL backend with a health check that costs no round trip while the server
has said nothing (ENGINE "kernel.database_backend", set by config/settings/database.py), and whose
first connect in a thread takes a connection a web process opened ahead when it has one
(kernel/database_backend/ahead.py).

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

A connection's lifetime (CONN_MAX_AGE) is spread: each lives between half and all of it.
A web process's threads connect together (at its start, or as a sale opens), so with one
fixed lifetime they all closed and reconnected in the same second, every CONN_MAX_AGE, busy
or not: in the bench, 16 to 18 backends forked in one second every minute, and once every
request waited ~400 ms behind them (docs/performance.md, "the reconnect storm").  Several web
nodes started by one deploy multiply it.  Spread, they come back one at a time.
"""

from __future__ import annotations

import random
import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper

from kernel.database_backend import ahead

# A connection lives between (1 - LIFETIME_SPREAD) and all of CONN_MAX_AGE.
LIFETIME_SPREAD = 0.5


class DatabaseWrapper(PostgresDatabaseWrapper):
    def connect(self) -> None:
        super().connect()
        if self.close_at is not None:
            max_age = self.settings_dict["CONN_MAX_AGE"]
            self.close_at -= random.uniform(0.0, max_age * LIFETIME_SPREAD)

    def get_new_connection(self, conn_params):
        """One opened ahead at the process's start when one is left (kernel/database_backend/
        ahead.py), else a new one.  Both come from Django's own `get_new_connection` with
        the same parameters, and keep the isolation level it set."""
        if self.pool is None:
            found = ahead.take(self.alias, server_said_nothing)
            if found is not None:
                connection, self.isolation_level = found
                return connection
        return super().get_new_connection(conn_params)

    def open_ahead(self, count: int, warmers: list[ahead.Warmer]) -> int:
        """Open `count` connections now, warm each with `warmers` (rolled back), and keep them
        for this alias's first connects in other threads.  Returns how many were kept; none
        with a pool (DB_POOL: the pool opens its own ahead)."""
        if self.pool is not None:
            return 0
        params = self.get_connection_params()
        for _ in range(count):
            connection = super().get_new_connection(params)
            # The time zone (and role) now, as Django's own pool configures the connections it
            # opens: a server whose TimeZone is "Etc/UTC" otherwise costs every new connection
            # a SET TIME ZONE and a COMMIT in its first request.
            if self._configure_connection(connection):
                connection.commit()
            ahead.warm(connection, warmers)
            ahead.keep(self.alias, connection, self.isolation_level)
        return count

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
