"""The front doors' shared web helpers: problem+json, client addresses, the API's renderers,
throttles, Idempotency-Key answers, OpenAPI snippets and a form's errors as a page message.
Every app's pages and API use them, so they sit in the kernel and import nothing of ours
above it."""
