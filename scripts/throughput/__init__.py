"""The throughput benchmark (``scripts/throughput_bench.py``, which documents the CLI): mkb eval vs a
KernelBench-style pipeline on the same candidates, and a per-build comparison of stock ``load_inline``, the
cuda backend's builder and its light header path.

common (constants, logging, running a pipeline in a session of its own and killing it whole), candidates,
host, summary (JSON fields, table), mkb_pipeline, kb_pipeline + kb_eval (KernelBench style), per_build, cli.
"""
