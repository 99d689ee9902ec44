"""``mkb report``: the paper's tables, failure breakdown and plots, from a results store.

Pipeline: :mod:`.data` (store -> per model/platform scores via :mod:`multikernelbench.scoring`) ->
:mod:`.tables` and :mod:`.plots` -> :mod:`.page` (markdown + self-contained HTML).
"""

from multikernelbench.report.data import OUTCOMES, ReportData, build_report_data, load_report_data, outcome
from multikernelbench.report.page import Report, build_report, write_report
from multikernelbench.report.tables import Table, all_tables

__all__ = ["OUTCOMES", "Report", "ReportData", "Table", "all_tables", "build_report", "build_report_data",
           "load_report_data", "outcome", "write_report"]
