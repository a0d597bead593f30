"""Redis from REDIS_URL (and REDIS_CLUSTER_URL): the cache and the channel layer; without
it, in-process ones."""

from config.settings.environment import env

# --- Redis: cache, channel layer, broker --------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
# A Redis Cluster (`redis://host:port,host:port,...`) for what is keyed by sale, room or user:
# the hold filters, the waiting room's queue and the cache.  Celery's broker and the channel
# layer stay on REDIS_URL (neither supports a cluster: docs/operations.md), so it needs both.
REDIS_CLUSTER_URL = env("REDIS_CLUSTER_URL", default="") if REDIS_URL else ""
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                # Redis is only a fast filter: when it vanishes, reads fall through to the
                # database instead of failing the request.
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
            "KEY_PREFIX": env("CACHE_KEY_PREFIX", default="sk"),
        }
    }
    DJANGO_REDIS_IGNORE_EXCEPTIONS = True
    if REDIS_CLUSTER_URL:
        # The cache (seat maps and their versions, token and throttle keys) on the cluster,
        # behind Django's Redis backend with redis-py's RedisCluster: django-redis has no
        # cluster client (kernel/cluster_cache.py, docs/operations.md "Redis Cluster").
        CACHES["default"] = {
            **CACHES["default"],
            "BACKEND": "kernel.cluster_cache.ClusterCache",
            "LOCATION": REDIS_CLUSTER_URL,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    # Each web process reads its sockets' messages with BZPOPMIN, which Redis holds open for
    # up to `brpop_timeout` (5 s) when nothing comes.  redis-py 8 reads with a 5-s socket
    # timeout by default, so an idle process lost that race: the read raised TimeoutError
    # and killed the websocket that happened to be reading (13 queue sockets per 2,000-wide
    # sale, docs/performance.md).  The read timeout must outlast the blocking pop; it still
    # bounds a Redis that stops answering.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": env.float("CHANNELS_SOCKET_TIMEOUT", default=15.0),
                        "socket_connect_timeout": 5,
                    }
                ],
                "prefix": env("CHANNELS_PREFIX", default="asgi"),
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
