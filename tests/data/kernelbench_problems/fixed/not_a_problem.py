"""A helper file with no Model: listed as not imported, with why."""
SCALE = 2
