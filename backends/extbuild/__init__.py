"""Faster torch-extension builds, shared by the ``cpu`` and ``cuda`` backends: one package, two sides.

Why a package: these speed-ups patch torch's loader at a few points, enter its nvcc through ``PYTORCH_NVCC`` and
add the precompiled header to the ``build.ninja`` it writes;
kept together, what runs where (and with whose rights) is visible in one place.

**Trusted side** -- makes per-machine artefacts once, in the harness's own processes, never with candidate code:

* :mod:`.cuda_warm` -- the background warmer a run starts (``Backend.prepare_builds``): the precompiled
  ``torch/extension.h`` of each flag set, the light-header analyses, the host prefixes;
* :mod:`.warm_jobs` -- the warmer's jobs as a process of their own (``python -m ...warm_jobs``);
* :mod:`.host_pch` -- the precompiled prefix for nvcc's final host compile.

**Per-build side** -- runs inside a candidate's sandboxed compile worker, reading the artefacts above:

* :mod:`.cuda_build` -- :class:`~.cuda_build.FastExtensionBuilder`, installed into torch's loader: content-keyed
  build cache, ``-include`` of the precompiled header (:class:`~.cuda_build.MainPchStep`), and ``PYTORCH_NVCC`` set to
  the one nvcc driver;
* :mod:`.nvcc_driver` -- what a build's nvcc is: each speed-up of the ``.cu`` compile a step (``applies``,
  ``apply``) around nvcc;
* :mod:`.nvcc_split` -- nvcc's device and host halves as separate ninja steps (the host half with the prefix);
* :mod:`.nvcc_light` and :mod:`.light_headers` -- a ``.cu`` read with ``<torch/types.h>`` where that keeps its
  meaning; :mod:`.ops_headers` and :mod:`.ops_path` -- and with only the operator headers it names (the warmer
  makes their index and base folder); :mod:`.probe_store` -- what both analyses share;
* :mod:`.warm_wait` -- a build that finds an artefact being made waits for it, bounded;
* :mod:`.flag_variants` -- which flag sets a run's sources build with (the warmer makes those first).

Every speed-up can be switched off by a typed backend option (backends/options.py: ``pch``, ``split_nvcc``,
``light_headers``, ``light_ahead``, ``light_ops``, ``fast_build``); docs/builds.md has the measurements behind each.
"""
