"""The ``mkb_speedup`` metric folder (script, card, Space files). Load it with ``evaluate.load("mkb_speedup")``
(an installed package), or by path: ``evaluate.load("metrics/mkb_speedup")``; importing this package does
nothing."""
