"""``mkb serve``: an HTTP evaluation service over the engine, for reward loops and agent searches.

* :mod:`.jobs` -- the job table, the result cache (the results store, keyed like ``mkb eval``'s) and the
  engine thread that evaluates queued submissions in batches through the same Runner (local or Ray).
* :mod:`.app` -- the FastAPI application: routes, bearer token, per-client limits, one-line 4xx reasons.
* :mod:`.metrics` -- Prometheus text for ``GET /metrics``.
"""
