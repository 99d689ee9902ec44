"""Import KernelBench-format problem folders as tasks (importer.py), and run them (runtime.py)."""
