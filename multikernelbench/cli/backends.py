"""``mkb backends``: which platforms this machine can evaluate, how they run here, and why not the others;
and the kernel sandbox level workers get here (never silently weaker: a weak level is shown in red).

Why a "runs as" column: triton and pallas are usable on a machine without a GPU, but only through their
interpreters (correct or not, never timed); "yes" alone would promise GPU kernels that are not there.
"""

from __future__ import annotations

from multikernelbench.cli._common import console


def add_parser(sub) -> None:
    p = sub.add_parser("backends", help="list platforms and whether their toolchain/device is present")
    p.set_defaults(func=run)


def describe(name: str) -> tuple[str, str]:
    """(how candidates run here, or "" when they cannot; why not) for one backend."""
    from multikernelbench.backends import get_backend

    try:
        backend = get_backend(name)
        avail = backend.availability()
    except Exception as exc:  # an import failure is itself the reason
        return "", f"cannot load backend: {exc!r}"
    if not avail.ok:
        return "", avail.reason
    if getattr(backend, "interpret", False):
        # A backend may name its interpreter (numba_cuda: Numba's CUDA simulator) in an available reason.
        return "interpreter", avail.reason or "on the CPU: checks correctness only, no timing (no usable GPU here)"
    device = backend.device_type
    # An available backend may still say what it found (opencl: the devices the probe listed, and a GPU driver
    # that is missing).
    return ("native" if device == "cpu" else f"native ({device})"), avail.reason


def run(args) -> int:
    # Imported here, not with the module: `mkb --help` and `mkb --version` build every command's parser, and
    # the backends' interface imports torch (1.5-2 s of CPU).
    from rich.table import Table

    from multikernelbench.backends import backend_names

    table = Table(title="backends")
    for col in ("backend", "available", "runs as", "reason / what was found"):
        table.add_column(col)
    for name in backend_names():
        runs_as, reason = describe(name)
        table.add_row(name, "[green]yes[/green]" if runs_as else "[red]no[/red]", runs_as, reason)
    console().print(table)
    from multikernelbench.engine.kernel_sandbox import support

    s = support()
    if s.complete:
        console().print(f"sandbox: [green]{s.label()}[/green] (every compile and device worker; missing: "
                        f"{'; '.join(s.missing()) or 'nothing'})", highlight=False)
    else:
        console().print(f"sandbox: [red]{s.label()}[/red]; missing: {'; '.join(s.missing())}. Untrusted code runs "
                        "only with --allow-weak-sandbox.", highlight=False)
    return 0
