"""The one ``nvcc`` a CUDA extension build runs, entered through ``PYTORCH_NVCC``: the variable torch's loader
already reads (its ``build.ninja`` says ``nvcc = <PYTORCH_NVCC>`` verbatim when it is set).

    python nvcc_driver.py [--split [--host-pch DIR]] [--light --shim DIR --cache DIR [--shared DIR]
                          [--no-ahead]] -- NVCC [WORDS...] ARGS...

Why through the environment: the speed-ups used to enter by rewriting the ``nvcc = ...`` line of the
``build.ninja`` torch had just written (a regular expression over torch's file layout, re-applied in every
process that ran the build, and only if the line still looked like a bare nvcc). Torch offers the variable for
exactly this (a ``ccache`` in front of nvcc); set once in the process that builds, every ``.cu`` compile of
every build of that process comes here, and ``build.ninja`` stays as torch wrote it.

Each speed-up is a :class:`Step`: ``applies`` says whether it may wrap this compile, ``apply`` returns the
command with it around (innermost first: the split driver around nvcc, the light-header driver around that).
Both drivers run anything they do not recognise (a dlink step, several sources, no ``-c``) unchanged, so a
step that applies never changes what is built, only how. The per-build reports go beside the compile's output
(the build folder: torch's ninja writes objects there). Standard library only: run as a script, without
importing the package (and torch) for each compile.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: Where the light-header driver writes which header path each ``.cu`` took (one JSON line per compile).
HEADER_REPORT = "mkb_cuda_headers.jsonl"
#: Where the split driver notes whether the final host compile used the precompiled prefix.
HOST_PCH_REPORT = "mkb_cuda_host_pch.jsonl"
_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class DriverOptions:
    """What a build's nvcc does besides nvcc (the builder's options, spelled as this driver's arguments)."""

    split: bool = False
    host_pch: Path | None = None  # the warmer's precompiled host prefixes (with ``split`` only)
    light: bool = False
    shim: Path | None = None  # the folder whose torch/extension.h reads as torch/types.h
    cache: Path | None = None  # where this build may write a light-header analysis
    shared: Path | None = None  # the warmer's analyses, read-only
    ahead: bool = True  # start the light compile beside the analysis (nvcc_light.py)
    ops: bool = True  # the ops path first: only the operators' headers the .cu names (ops_headers.py)

    def argv(self) -> list[str]:
        out = ["--split"] if self.split else []
        out += ["--host-pch", str(self.host_pch)] if self.split and self.host_pch else []
        if self.light and self.shim and self.cache:
            out += ["--light", "--shim", str(self.shim), "--cache", str(self.cache)]
            out += ["--shared", str(self.shared)] if self.shared else []
            out += [] if self.ahead else ["--no-ahead"]
            out += [] if self.ops else ["--no-ops"]
        return out

    def enabled(self) -> bool:
        return bool(self.argv())

    def env_value(self, nvcc: list[str]) -> str:
        """``PYTORCH_NVCC``'s value: this driver with these options around ``nvcc`` (torch writes it into
        build.ninja as it is, so it is one shell-quoted line)."""
        return shlex.join([sys.executable, str(_HERE / "nvcc_driver.py"), *self.argv(), "--", *nvcc])

    @classmethod
    def parse(cls, argv: list[str]) -> tuple[DriverOptions, list[str]]:
        """(options, everything after ``--``: the nvcc command and its arguments)."""
        cut = argv.index("--")
        words, i = argv[:cut], 0
        paths: dict[str, Path] = {}
        flags: dict[str, bool] = {}
        names = {"--host-pch": "host_pch", "--shim": "shim", "--cache": "cache", "--shared": "shared"}
        switches = {"--split": ("split", True), "--light": ("light", True), "--no-ahead": ("ahead", False),
                    "--no-ops": ("ops", False)}
        while i < len(words):
            if words[i] in names and i + 1 < len(words):
                paths[names[words[i]]] = Path(words[i + 1])
                i += 2
            elif words[i] in switches:
                key, value = switches[words[i]]
                flags[key] = value
                i += 1
            else:
                raise ValueError(f"nvcc_driver.py: unknown option {words[i]!r}")
        return cls(**flags, **paths), argv[cut + 1:]  # type: ignore[arg-type]


@dataclass(frozen=True)
class Call:
    """One compile as the driver sees it: the command so far (nvcc, or a driver around it) and nvcc's
    arguments as torch's ninja rule wrote them."""

    command: list[str]
    args: list[str]

    def out_dir(self) -> Path | None:
        """The folder of the compile's ``-o`` output (the build folder), where the reports go."""
        if "-o" in self.args[:-1]:
            return Path(os.path.abspath(self.args[self.args.index("-o") + 1])).parent
        return None

    def argv(self) -> list[str]:
        return [*self.command, *self.args]


class Step(Protocol):
    name: str

    def applies(self, opts: DriverOptions, call: Call) -> bool: ...

    def apply(self, opts: DriverOptions, call: Call) -> Call: ...


class SplitStep:
    """nvcc's host and device halves side by side (nvcc_split.py), with the warmer's host prefix when named.
    Only around nvcc itself: a ``ccache nvcc`` a user put in front is left as it is."""

    name = "split_nvcc"

    def applies(self, opts: DriverOptions, call: Call) -> bool:
        return opts.split and len(call.command) == 1 and os.path.basename(call.command[0]) == "nvcc"

    def apply(self, opts: DriverOptions, call: Call) -> Call:
        extra: list[str] = []
        out = call.out_dir()
        if opts.host_pch:
            extra = ["--host-pch", str(opts.host_pch)] + (["--report", str(out / HOST_PCH_REPORT)] if out else [])
        return Call([sys.executable, str(_HERE / "nvcc_split.py"), *extra, *call.command], call.args)


class LightStep:
    """The ``.cu`` read with ``<torch/types.h>`` where that keeps its meaning (nvcc_light.py), stock else."""

    name = "light_headers"

    def applies(self, opts: DriverOptions, call: Call) -> bool:
        return opts.light and opts.shim is not None and opts.cache is not None

    def apply(self, opts: DriverOptions, call: Call) -> Call:
        out = call.out_dir()
        words = [sys.executable, str(_HERE / "nvcc_light.py"), "--shim", str(opts.shim), "--cache", str(opts.cache)]
        words += ["--report", str(out / HEADER_REPORT)] if out else []
        words += ["--nvcc-words", str(len(call.command))]
        words += ["--shared", str(opts.shared)] if opts.shared else []
        words += [] if opts.ahead else ["--no-ahead"]
        words += [] if opts.ops else ["--no-ops"]
        return Call([*words, "--", *call.command], call.args)


#: Innermost first: the light driver's stock fallback is the split build, not plain nvcc.
STEPS: tuple[Step, ...] = (SplitStep(), LightStep())


def command(opts: DriverOptions, nvcc: list[str], args: list[str]) -> list[str]:
    """What runs for one nvcc call: every step that applies, around ``nvcc``."""
    call = Call(list(nvcc), list(args))
    for step in STEPS:
        if step.applies(opts, call):
            call = step.apply(opts, call)
    return call.argv()


def split_command(rest: list[str]) -> tuple[list[str], list[str]]:
    """The nvcc command and its arguments: the command is every word up to and including the first that
    names an ``nvcc`` (one word for a bare nvcc, two for ``ccache nvcc``)."""
    for i, w in enumerate(rest):
        if os.path.basename(w) == "nvcc":
            return rest[:i + 1], rest[i + 1:]
    return rest[:1], rest[1:]


def underlying(words: list[str]) -> list[str]:
    """The nvcc command inside a ``PYTORCH_NVCC`` value this driver wrote (what a build's ``nvcc`` variable
    says in a process that installed the builder), or ``words`` as they are."""
    if len(words) > 1 and os.path.basename(words[1]) == "nvcc_driver.py" and "--" in words:
        return split_command(words[words.index("--") + 1:])[0]
    return words


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(f"usage: python {__file__} [OPTIONS] -- NVCC ARGS...", file=sys.stderr)
        return 2
    opts, rest = DriverOptions.parse(argv)
    if not rest:
        print("nvcc_driver.py: no nvcc command after --", file=sys.stderr)
        return 2
    cmd = command(opts, *split_command(rest))
    os.execvp(cmd[0], cmd)  # this process becomes the compile: signals and exit status are its own


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
