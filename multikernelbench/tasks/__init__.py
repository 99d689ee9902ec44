"""Task records and the loader that builds them from task source files (or from the built dataset)."""

from multikernelbench.tasks.from_dataset import load_from_dataset
from multikernelbench.tasks.loader import TaskFormatError, load_suite, load_task_file, suite_dir
from multikernelbench.tasks.record import DTYPE_TOLERANCE, Task

__all__ = ["Task", "DTYPE_TOLERANCE", "load_suite", "load_task_file", "suite_dir", "TaskFormatError",
           "load_from_dataset"]
