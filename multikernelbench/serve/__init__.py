"""``mkb serve``: an HTTP evaluation service over the engine, for reward loops and agent searches.

* :mod:`.jobs` -- the job table and the result cache (exact key and strength: :mod:`.cachekey`); accepted
  jobs are durable (:mod:`.durable`).
* :mod:`.sched` -- whose job a free lane takes: recent engine time, lane caps, caps on pending work.
* :mod:`.lanes` -- one thread per device lane, evaluating through the same Runner as ``mkb eval`` (or Ray).
* :mod:`.app` -- the FastAPI application: routes, bearer token, per-client limits, one-line 4xx reasons.
* :mod:`.metrics` -- Prometheus text for ``GET /metrics``.
"""
