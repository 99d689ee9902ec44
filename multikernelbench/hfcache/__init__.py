"""Make ``load_dataset("multikernelbench")`` and ``evaluate.load("mkb_speedup")`` work by name, offline, anywhere.

Both libraries resolve a bare name in the same two steps: a local folder of that name (relative to the
working directory), else the Hub; when the Hub cannot be reached (no network, or ``HF_HUB_OFFLINE=1``) they
fall back to what an earlier download left in their caches. This package puts the installed package's own
copies exactly where that fallback looks, in the layout the libraries write themselves:

- ``datasets``: ``$HF_DATASETS_CACHE/multikernelbench/<config>/<format version>/<hash>/`` holding
  ``dataset_info.json`` (features, splits, version, license) and ``multikernelbench-test.arrow``, one folder
  per config (``all``, the default, is the most recent, so a load without a config name gets it);
- ``evaluate``: ``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--mkb_speedup/<sha256>/`` holding
  the metric script, as ``evaluate`` caches a canonical metric it downloaded.

Nothing is faked: the rows are the parquet files shipped in the wheel (``multikernelbench/data/``), the script
is the shipped ``multikernelbench/metrics/mkb_speedup``. A Hub copy (``mkb dataset push``, or the metric
published as a Space) is found first whenever the Hub is reachable, under its own ``org/name``.

Who writes the caches: every install, wheel or editable (setup.py adds it to the PEP 660 wheel too), puts
``multikernelbench-hfcache.pth`` in site-packages, whose one line runs
:func:`multikernelbench.hfcache.hook.install` at interpreter start. That checks (two ``stat`` calls) that this
installed copy is already cached and returns; only the first time (or after an upgrade) it arranges for the
caches to be written right after the process imports ``datasets`` (:mod:`.startup`; the dataset part needs
``datasets``, the metric part ``evaluate``). ``MKB_HF_CACHE=0`` turns it off; ``mkb dataset cache`` does the
same work on demand.
"""
