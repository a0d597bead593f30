"""The front doors' shared web helpers: problem+json, client addresses, the API's renderers,
throttles, Idempotency-Key answers and OpenAPI snippets.  Every app's pages and API use them,
so they sit in the kernel and import nothing of ours above it."""
