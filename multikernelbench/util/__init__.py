"""Small helpers with no dependency on the rest of the package (the bottom layer): file locks, process
limits and session-wide kills. Anything here may be imported by every other layer."""
