"""multikernelbench: measure how well LLMs write fast deep-learning kernels on many platforms.

The package is split by stage (tasks -> prompts -> sampling -> engine -> store -> metrics/report); each
stage passes typed records from :mod:`multikernelbench.records` to the next.
"""

__version__ = "0.1.0"
