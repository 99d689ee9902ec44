"""``mkb dataset build`` / ``push`` / ``cache``: the suite as a Hugging Face dataset.

``build`` writes ``<out>/multikernelbench-<version>/`` and, in a source checkout, refreshes the copy in the
package folder that ``load_dataset("multikernelbench")`` finds from the repository root. ``push`` uploads a
built folder with huggingface_hub (``--dry-run`` prints the exact calls without touching the network).
``cache`` puts the package's copy of the dataset and of the ``mkb_speedup`` metric where
``load_dataset("multikernelbench")`` and ``evaluate.load("mkb_speedup")`` find them offline (an installed wheel
does it by itself at interpreter start: multikernelbench/hfcache).
"""

from __future__ import annotations

import sys
from pathlib import Path

from multikernelbench.cli._heldout import add_dataset_option, heldout_configs

#: Built folders go outside any checkout by default (the package copy is refreshed on purpose, see above).
DEFAULT_OUT = Path.home() / ".cache" / "multikernelbench" / "dist"


def add_parser(sub) -> None:
    p = sub.add_parser("dataset", help="build the suite into a parquet dataset, or push it to the Hub")
    dsub = p.add_subparsers(dest="dataset_command", metavar="ACTION")

    b = dsub.add_parser("build", help="write parquet files + dataset card (deterministic)")
    _common(b)
    add_dataset_option(b)
    b.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if the package copy is missing or stale")
    b.set_defaults(func=run_build)

    u = dsub.add_parser("push", help="upload a built dataset to the Hugging Face Hub (or lay it out in a folder)")
    u.add_argument("--repo-id", default=None, help="ORG/NAME of the Hub dataset repository")
    u.add_argument("--local-dir", type=Path, default=None,
                   help="instead of uploading, leave this folder as the Hub repository would be after the "
                        "upload (e.g. a clone of it); load it back with load_dataset(DIR)")
    u.add_argument("--folder", type=Path, default=None,
                   help="a folder built by `mkb dataset build` (default: build one now under --out)")
    u.add_argument("--private", action="store_true", help="create the repository as private")
    u.add_argument("--no-tag", action="store_true", help="do not tag the commit v<version>")
    u.add_argument("--dry-run", action="store_true", help="print the Hub calls and files; send nothing")
    _common(u)
    u.set_defaults(func=run_push)
    c = dsub.add_parser("cache", help="put the packaged dataset and metric into the Hugging Face caches "
                                      "(load_dataset/evaluate.load by name, offline)")
    c.set_defaults(func=run_cache)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _common(p) -> None:
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help=f"parent folder of multikernelbench-<version>/ (default: {DEFAULT_OUT})")
    p.add_argument("--card", type=Path, default=None, help="card template (default: CARD.md of the checkout)")
    p.add_argument("--no-package", action="store_true",
                   help="do not refresh the copy in the package folder (multikernelbench/README.md, data/)")


def _build(args):
    from multikernelbench.dataset_builder import build
    from multikernelbench.tasks import load_suite

    tasks = load_suite()
    extra = heldout_configs(getattr(args, "heldout", []))
    result = build.build_dataset(args.out, tasks, template=args.card, extra_configs=extra)
    print(f"built {result.folder}: version {result.version}, {result.total} rows in "
          f"{len(result.counts)} categories" + "".join(f", config {k} ({len(v)} rows)" for k, v in extra.items()))
    if not args.no_package and build.in_source_checkout():
        pkg = build.install_into_package(tasks, template=args.card)
        print(f"refreshed {pkg.folder}/README.md and {pkg.folder}/data/ (load_dataset(\"multikernelbench\"))")
    return result


def run_build(args) -> int:
    from multikernelbench.dataset_builder import build

    if args.check:
        from multikernelbench.tasks import load_suite

        tasks = load_suite()
        problems = build.package_copy_problems(tasks, template=args.card)
        if problems:
            print(f"package dataset copy in {build.package_folder()} is stale: " + "; ".join(problems) +
                  ". Run `mkb dataset build` and commit multikernelbench/README.md and multikernelbench/data/",
                  file=sys.stderr)
            return 1
        print(f"package dataset copy is up to date ({build.dataset_version(tasks)})")
        return 0
    _build(args)
    return 0


def run_push(args) -> int:
    from multikernelbench.dataset_builder.push import PushError, copy_to_folder, execute, plan_push

    if not args.repo_id and args.local_dir is None:
        print("mkb dataset push: pass --repo-id ORG/NAME (or --local-dir DIR)", file=sys.stderr)
        return 2
    try:
        folder = args.folder if args.folder is not None else _build(args).folder
        plan = plan_push(folder, args.repo_id or "local/multikernelbench", private=args.private,
                         tag=not args.no_tag)
        if args.local_dir is not None:
            written = copy_to_folder(plan, args.local_dir)
            print(f"laid out {len(written)} files in {args.local_dir} as the Hub repository would hold them "
                  f"(version {plan.version}): load_dataset({str(args.local_dir)!r})")
            return 0
        print(plan.describe())
        if args.dry_run:
            print("dry run: nothing sent")
            return 0
        execute(plan)
    except PushError as exc:
        print(f"mkb dataset push: {exc}", file=sys.stderr)
        return 1
    print(f"pushed: load_dataset({args.repo_id!r}) (revision 'v{plan.version}' pins this version)")
    return 0


def run_cache(args) -> int:
    from multikernelbench.hfcache import paths
    from multikernelbench.hfcache.startup import seed

    report = seed(force=True)
    if report.dataset:
        print(f"dataset: {len(report.dataset)} configs under {paths.dataset_cache_root()} "
              f"(load_dataset(\"{paths.DATASET_NAME}\"))")
    if report.metric:
        print(f"metric: {report.metric} (evaluate.load(\"{paths.METRIC_NAME}\"))")
    for line in report.skipped:
        print(f"skipped {line}", file=sys.stderr)
    return 0 if (report.dataset or report.metric) else 1
