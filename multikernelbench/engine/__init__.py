"""The evaluation engine: compile in a pool, check and time in isolated device workers, store results."""
