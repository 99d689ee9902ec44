"""What one g++ process costs for a CPU candidate, split by what its translation unit holds.

    python scripts/cpu_tu_floor.py [--solution solutions/cpu/activation.relu.py] [--repeats 3] [--out F.json]

Why: the precompiled ``torch/extension.h`` halved a C++ build, and the question was where the other half
goes. This compiles, with the PCH force-included and the solution's own flags (exactly the g++ command of
its ``build.ninja``), four translation units and reports the CPU seconds (user + sys) of each g++ process:

* ``full``: ``main.cpp`` as ``load_inline`` writes it (the candidate's code, then the pybind11 bindings);
* ``no_bindings``: the same without the ``PYBIND11_MODULE`` block;
* ``bindings_only``: only the bindings, calling the function through a pointer declared ``extern``;
* ``empty``: nothing but the force-included header (``int mkb_unused;``).

If the bindings were the cost, ``no_bindings`` would be much cheaper than ``full``; if the header is,
``empty`` costs about as much as ``full``. One ``-ftime-report`` of ``empty`` gives GCC's own breakdown. The
rounds alternate the order of the four so a drifting machine load falls on all alike; the summary is the
median per unit. Needs the shared PCH for the solution's flags (made first, in this process, if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from cpu_build_bench import cflags_of, machine  # noqa: E402

from multikernelbench.util.results_dir import default_out  # noqa: E402


class _Captured(Exception):
    pass


def capture_build(solution: Path, work: Path) -> tuple[str, Path]:
    """Run the solution's ``load_inline`` up to the point where ninja would start; return the compile command
    (with the PCH force-included, as the cpu backend's builder rewrites it) and the written main.cpp."""
    import torch.utils.cpp_extension as ce

    from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder
    from multikernelbench.backends.extbuild.cuda_warm import warm_pch

    pch_root = Path.home() / ".cache" / "multikernelbench" / "pch"
    flags = cflags_of(solution) or ()
    print(f"PCH for {list(flags)}: {warm_pch(pch_root, (flags,), with_cuda=False)}", flush=True)
    builder = FastExtensionBuilder(pch_root, pch=True, cache=False, split_nvcc=False, pch_root=pch_root)
    orig = ce._run_ninja_build

    def capture(build_directory, verbose, error_prefix):
        builder._add_pch(Path(build_directory))
        raise _Captured(build_directory)

    ce._run_ninja_build = capture
    os.environ["TORCH_EXTENSIONS_DIR"] = str(work / "ext")
    try:
        exec(compile(solution.read_text(), str(solution), "exec"), {"__name__": "candidate"})
        raise SystemExit("the solution built nothing")
    except _Captured as exc:
        build_dir = Path(str(exc))
    finally:
        ce._run_ninja_build = orig
    if not any("pch_used" in e for e in builder.log):
        raise SystemExit(f"the PCH was not used: {builder.log}")
    v = dict(re.findall(r"^([A-Za-z_]+) = (.*)$", (build_dir / "build.ninja").read_text(), flags=re.M))
    return f"{v['cxx']} {v['cflags']} {v.get('post_cflags', '')}", build_dir / "main.cpp"


def units(main_cpp: str) -> dict[str, str]:
    head, sep, tail = main_cpp.partition("PYBIND11_MODULE(")
    if not sep:
        raise SystemExit("main.cpp has no bindings (functions=None?)")
    decls = []
    for name in re.findall(r'm\.def\("(\w+)"', tail):
        # The definition's own head as a declaration (enough for the shipped solutions; not a C++ parser).
        m = re.search(rf"^([^;{{}}#]*?\b{name}\s*\([^)]*\))\s*\{{", head, flags=re.M)
        if not m:
            raise SystemExit(f"no definition of {name} found")
        decls.append(m.group(1).strip() + ";")
    return {
        "full": main_cpp,
        "no_bindings": head,
        "bindings_only": "#include <torch/extension.h>\n" + "\n".join(decls) + "\n" + sep + tail,
        "empty": "int mkb_unused;\n",
    }


def compile_once(cmd: str, src: Path, extra: list[str] | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(shlex.split(cmd) + ["-c", str(src), "-o", str(src.with_suffix(".o"))] + (extra or []),
                         capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"{src.name} failed:\n{res.stderr[-2000:]}")
    return {"wall": wall, "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
            "stderr": res.stderr}


def time_report(stderr: str) -> dict[str, float]:
    """User seconds of GCC's main phases from ``-ftime-report``."""
    out = {}
    for name in ("phase parsing", "phase lang. deferred", "template instantiation", "phase opt and generate",
                 "callgraph ipa passes", "PCH main state restore", "TOTAL"):
        m = re.search(rf"^\s*{re.escape(name)}\s*:\s*([\d.]+)", stderr, flags=re.M)
        if m:
            out[name] = float(m.group(1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--solution", type=Path, default=ROOT / "solutions" / "cpu" / "activation.relu.py")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mkb-tu-floor-"))
    try:
        cmd, main_cpp = capture_build(a.solution.resolve(), work)
        srcs = {}
        for name, text in units(main_cpp.read_text()).items():
            srcs[name] = work / f"{name}.cpp"
            srcs[name].write_text(text)
        names = list(srcs)
        rows = []
        for r in range(a.repeats):
            for name in (names if r % 2 == 0 else names[::-1]):
                row = compile_once(cmd, srcs[name])
                row.pop("stderr")
                rows.append({"unit": name, "round": r, "loadavg_before": os.getloadavg()[0], **row})
                print(f"round {r} {name:14s} cpu {row['user'] + row['sys']:6.1f} s  wall {row['wall']:6.1f} s",
                      flush=True)
        report = time_report(compile_once(cmd, srcs["empty"], ["-ftime-report"])["stderr"])
        summary = {n: {"cpu_p50": statistics.median(x["user"] + x["sys"] for x in rows if x["unit"] == n),
                       "wall_p50": statistics.median(x["wall"] for x in rows if x["unit"] == n)} for n in names}
        result = {"solution": a.solution.name, "command": cmd, "machine": machine(), "rows": rows,
                  "summary": summary, "empty_time_report_user_s": report}
        out = a.out or default_out("cpu_tu_floor.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1))
        print(f"\n{'unit':14s} {'p50 CPU':>8s} {'p50 wall':>9s}")
        for n, s in summary.items():
            print(f"{n:14s} {s['cpu_p50']:7.1f}s {s['wall_p50']:8.1f}s")
        print("-ftime-report of empty (user s):", json.dumps(report))
        print(f"wrote {out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
