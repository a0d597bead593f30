"""Shared REST plumbing: problem-details errors, parsing, throttles, OpenAPI helpers, auth."""
