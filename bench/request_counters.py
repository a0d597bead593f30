"""Counting what requests cost besides CPU: PostgreSQL statements and round trips (BEGIN and
COMMIT included), Redis commands and round trips, for bench/request_cost.py and its callers."""

from __future__ import annotations

import contextlib


class Counters:
    """PostgreSQL statements (an execute wrapper) and round trips (the statements and each
    transaction's BEGIN and COMMIT or ROLLBACK, which psycopg sends as commands of their own),
    Redis commands (redis-py's `execute_command` and pipelines) and Celery publishes made while
    active."""

    def __init__(self) -> None:
        self.sql = 0
        self.pg_round_trips = 0
        self.redis = 0
        self.round_trips = 0
        self.publishes = 0

    @contextlib.contextmanager
    def counting(self):
        import redis
        import redis.cluster
        import redis.connection
        from django.db import connection
        from django.db.backends.base.base import BaseDatabaseWrapper
        from psycopg.pq import TransactionStatus

        def in_transaction(db) -> bool:
            return (
                db.connection is not None
                and db.connection.info.transaction_status != TransactionStatus.IDLE
            )

        def wrapper(execute, sql, params, many, context):
            self.sql += 1
            # Outside autocommit, psycopg sends BEGIN before the first statement.
            begins = not connection.get_autocommit() and not in_transaction(connection)
            self.pg_round_trips += 1 + begins
            return execute(sql, params, many, context)

        real_commit, real_rollback = BaseDatabaseWrapper._commit, BaseDatabaseWrapper._rollback

        def ending(real):
            def end(db):
                self.pg_round_trips += in_transaction(db)
                return real(db)

            return end

        BaseDatabaseWrapper._commit = ending(real_commit)
        BaseDatabaseWrapper._rollback = ending(real_rollback)

        real_command = redis.Redis.execute_command
        real_pipeline = redis.client.Pipeline.execute

        def command(client, *args, **kwargs):
            self.redis += 1
            return real_command(client, *args, **kwargs)

        def pipeline(pipe, *args, **kwargs):
            self.redis += 1  # one round trip, however many commands
            return real_pipeline(pipe, *args, **kwargs)

        # The cluster client's own commands and pipelines (it does not go through the above).
        real_cluster_command = redis.cluster.RedisCluster.execute_command
        real_cluster_pipeline = redis.cluster.ClusterPipeline.execute

        def cluster_command(client, *args, **kwargs):
            self.redis += 1
            return real_cluster_command(client, *args, **kwargs)

        def cluster_pipeline(pipe, *args, **kwargs):
            self.redis += 1
            return real_cluster_pipeline(pipe, *args, **kwargs)

        # A command on a thread's own connection (kernel.redis_own_connection, issue 26) skips
        # `execute_command`; a checkout without that module has none.
        try:
            from kernel import redis_own_connection as own
        except ImportError:
            own = None
        real_own = getattr(own, "execute_on_own_connection", None)

        def own_command(client, *args):
            self.redis += 1
            return real_own(client, *args)

        # Round trips, the same way for both clients: each write to a Redis socket.
        real_send = redis.connection.AbstractConnection.send_packed_command

        def send(conn, *args, **kwargs):
            self.round_trips += 1
            return real_send(conn, *args, **kwargs)

        # Celery messages sent (kombu's Producer.publish: a task's apply_async, a kick).
        import kombu.messaging

        real_publish = kombu.messaging.Producer.publish

        def publish(producer, *args, **kwargs):
            self.publishes += 1
            return real_publish(producer, *args, **kwargs)

        kombu.messaging.Producer.publish = publish
        redis.Redis.execute_command = command
        redis.client.Pipeline.execute = pipeline
        redis.cluster.RedisCluster.execute_command = cluster_command
        redis.cluster.ClusterPipeline.execute = cluster_pipeline
        redis.connection.AbstractConnection.send_packed_command = send
        if real_own is not None:
            own.execute_on_own_connection = own_command
        try:
            with connection.execute_wrapper(wrapper):
                yield self
        finally:
            kombu.messaging.Producer.publish = real_publish
            BaseDatabaseWrapper._commit, BaseDatabaseWrapper._rollback = real_commit, real_rollback
            redis.Redis.execute_command = real_command
            redis.client.Pipeline.execute = real_pipeline
            redis.cluster.RedisCluster.execute_command = real_cluster_command
            redis.cluster.ClusterPipeline.execute = real_cluster_pipeline
            redis.connection.AbstractConnection.send_packed_command = real_send
            if real_own is not None:
                own.execute_on_own_connection = real_own
