"""Counting what requests cost besides CPU: PostgreSQL statements and Redis commands and round
trips, for bench/request_cost.py and its callers."""

from __future__ import annotations

import contextlib


class Counters:
    """PostgreSQL statements (an execute wrapper) and Redis commands (redis-py's
    `execute_command` and pipelines) made while active."""

    def __init__(self) -> None:
        self.sql = 0
        self.redis = 0
        self.round_trips = 0

    @contextlib.contextmanager
    def counting(self):
        import redis
        import redis.cluster
        import redis.connection
        from django.db import connection

        def wrapper(execute, sql, params, many, context):
            self.sql += 1
            return execute(sql, params, many, context)

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

        # Round trips, the same way for both clients: each write to a Redis socket.
        real_send = redis.connection.AbstractConnection.send_packed_command

        def send(conn, *args, **kwargs):
            self.round_trips += 1
            return real_send(conn, *args, **kwargs)

        redis.Redis.execute_command = command
        redis.client.Pipeline.execute = pipeline
        redis.cluster.RedisCluster.execute_command = cluster_command
        redis.cluster.ClusterPipeline.execute = cluster_pipeline
        redis.connection.AbstractConnection.send_packed_command = send
        try:
            with connection.execute_wrapper(wrapper):
                yield self
        finally:
            redis.Redis.execute_command = real_command
            redis.client.Pipeline.execute = real_pipeline
            redis.cluster.RedisCluster.execute_command = real_cluster_command
            redis.cluster.ClusterPipeline.execute = real_cluster_pipeline
            redis.connection.AbstractConnection.send_packed_command = real_send
