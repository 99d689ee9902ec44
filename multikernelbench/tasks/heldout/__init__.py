"""Held-out tasks: a seeded generator of fresh fusion tasks that no model can have seen.

A task is drawn as a small graph of primitive ops the suite covers (draft.py, ops_*.py, compose.py), written
out as an ordinary task file (codegen.py) with shapes sized by sizing.py, then kept only if it passes the
suite's degeneracy gates and differs, as an op graph, from every suite task and every task drawn before it
(signature.py). generate.py drives the loop; sets.py names a generated set ``heldout-<seed>`` so every
command can use it like the suite.
"""
