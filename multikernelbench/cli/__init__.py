"""The ``mkb`` command line: one module per subcommand, discovered automatically (see main.py)."""
