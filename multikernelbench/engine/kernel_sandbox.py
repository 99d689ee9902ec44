"""The kernel-enforced sandbox of every compile and device worker: Landlock, seccomp, no_new_privs, no
capabilities; and non-dumpable trusted processes.

Why here and in this order: the parent computes a :class:`SandboxPolicy` (which folders a worker may read,
which it may write) before it starts the worker; the child applies it after its session, working directory,
environment and resource limits are set (the network namespace needs CAP_SYS_ADMIN, so it comes first) and
before the first line of worker code (:func:`enter`, called by the zygote's forked child and by the
fresh-interpreter path's ``preexec_fn``). Everything it sets is inherited by whatever the candidate starts
(compilers, ninja, Triton's launcher build) and survives ``execve``.

What a worker may write: its own working directory (= its private ``TMPDIR``), its own candidate's build
folder, and the toolchain caches its environment points it at (``TORCHINDUCTOR_CACHE_DIR``,
``TRITON_CACHE_DIR``, ``CUDA_CACHE_PATH``, ``MKB_EXT_CACHE``, ...; the engine and the backends set each of them
to a folder of that worker or candidate, except the reference compile cache of trusted reference-only runs).
What it may read and execute: the system folders, Python's prefixes, standard library and site-packages
(never ``sys.path``), the package's own folder, CUDA, and
the shared folders its backend names (the precompiled headers). Nothing else: not ``$HOME``, not ``/tmp``,
not other candidates' builds, not the Hugging Face cache or its token, not the results store.

Never silently weaker: :func:`support` says which layers this kernel has, the runner refuses to start without
all of them unless ``allow_weak_sandbox`` is set, every result records :func:`SandboxSupport.label`, and a
layer that was detected but fails to apply in the child is an error there (the worker dies), not a skip.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from multikernelbench.util import landlock, seccomp
from multikernelbench.util.sandbox_paths import CACHE_ENV, READ_ENV, WRITE_ENV, paths_env, writable_from_env  # noqa: F401 - re-exported

_SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys",
                "/dev", "/run")
#: Device files a worker may write (each a file rule: no creating or removing anything in /dev; /dev/shm
#: stays closed, it is a folder every process of the host shares).
_DEV_WRITE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx")


@dataclass(frozen=True)
class SandboxSupport:
    """Which layers this kernel offers. ``label()`` is what results record."""

    landlock_abi: int
    seccomp: bool

    @property
    def complete(self) -> bool:
        return self.landlock_abi >= 1 and self.seccomp

    def missing(self) -> list[str]:
        out = []
        if self.landlock_abi < 1:
            out.append("Landlock (file access)")
        elif self.landlock_abi < 4:
            out.append(f"Landlock TCP rules (ABI 4; kernel has {self.landlock_abi})")
        if 1 <= self.landlock_abi < 6:
            out.append(f"Landlock signal/abstract-socket scoping (ABI 6; kernel has {self.landlock_abi})")
        if not self.seccomp:
            out.append("seccomp filters")
        return out

    def label(self) -> str:
        """``landlock7+seccomp`` when complete, else ``weak:`` and what there is (``weak:none``)."""
        parts = ([f"landlock{self.landlock_abi}"] if self.landlock_abi >= 1 else []) + \
            (["seccomp"] if self.seccomp else [])
        text = "+".join(parts) or "none"
        return text if self.complete else f"weak:{text}"


@lru_cache(maxsize=1)
def support() -> SandboxSupport:
    """Probe once per process (two syscalls)."""
    if not sys.platform.startswith("linux"):
        return SandboxSupport(0, False)
    return SandboxSupport(landlock.abi_version(), seccomp.available())


class WeakSandbox(RuntimeError):
    """The kernel lacks a layer and the user did not accept running untrusted code without it."""


def require(allow_weak: bool) -> SandboxSupport:
    s = support()
    if not s.complete and not allow_weak:
        raise WeakSandbox(
            "this kernel cannot sandbox candidate code fully (missing: " + "; ".join(s.missing()) + "). Untrusted "
            "code could then write outside its folders, read other processes or reach the network. Run on a "
            "kernel with Landlock and seccomp (Linux >= 5.13 with landlock in the LSM list), or accept the "
            "weaker isolation with --allow-weak-sandbox (EngineConfig.allow_weak_sandbox).")
    return s


def _python_read_paths() -> list[str]:
    """A declared list, never ``sys.path`` (issue #41: Ray puts the driver's working folder on every worker's
    import path, and a script run from a folder puts that folder there): Python's prefixes and executable, its
    standard library and site-packages (``sysconfig``), and this package's own folder and its mapped backends
    folder, not the checkout that holds them (an editable install maps them from a source tree that also holds
    results, tokens and other candidates' files). Not ``/`` nor ``$HOME`` or a folder above it."""
    import sysconfig

    home = os.path.realpath(os.path.expanduser("~"))
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        got = sysconfig.get_paths(vars=scheme_vars) if scheme_vars else sysconfig.get_paths()
        paths += [got[k] for k in ("stdlib", "platstdlib", "purelib", "platlib", "include", "platinclude")
                  if got.get(k)]
    import site

    paths += [p for p in site.getsitepackages() + [site.getusersitepackages()] if p]
    import multikernelbench

    paths.append(str(Path(multikernelbench.__file__).resolve().parent))
    try:
        import multikernelbench.backends as b

        paths.append(str(Path(b.__file__).resolve().parent))
    except ImportError:
        pass
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if not os.path.isdir(real) or real == "/" or real == home or home.startswith(real.rstrip("/") + "/"):
            continue
        out.append(real)
    return list(dict.fromkeys(out))


@dataclass
class SandboxPolicy:
    """What one worker may do: made in the parent, applied in the child (:func:`enter`). JSON-able, because
    the zygote gets it in its spawn request."""

    read: list[str] = field(default_factory=list)
    write: list[str] = field(default_factory=list)
    landlock_abi: int = 0
    seccomp: bool = False
    #: Device files it may write, and the seccomp programs (hex; with and without its own network
    #: namespace), prepared in the parent so that the child only makes syscalls.
    dev_write: list[str] = field(default_factory=list)
    bpf_hex: str = ""
    bpf_netns_hex: str = ""
    #: The unprivileged uid/gid the child drops to first (engine/worker_uid.py); -1: none.
    uid: int = -1
    gid: int = -1

    @classmethod
    def for_worker(cls, env: dict[str, str], workdir: str) -> SandboxPolicy:
        s = support()
        extra_read = [p for p in env.get(READ_ENV, "").split(os.pathsep) if p]
        for k in ("CUDA_HOME", "CUDA_PATH"):
            if env.get(k):
                extra_read.append(env[k])
        write = [str(workdir)] + writable_from_env(env)
        for p in write:  # Landlock rules need existing folders; the parent (trusted) makes them
            Path(p).mkdir(parents=True, exist_ok=True)
        read = list(dict.fromkeys(list(_SYSTEM_READ) + _python_read_paths() + extra_read))
        return cls(read=read, write=list(dict.fromkeys(os.path.realpath(p) for p in write)),
                   landlock_abi=s.landlock_abi, seccomp=s.seccomp, dev_write=device_write_files(),
                   bpf_hex=seccomp.build_filter(allow_netlink=False).hex() if s.seccomp else "",
                   bpf_netns_hex=seccomp.build_filter(allow_netlink=True).hex() if s.seccomp else "")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SandboxPolicy:
        return cls(**d)


def device_write_files() -> list[str]:
    """The device files a worker may write: the fixed list and the GPU's nodes present on this host."""
    out = list(_DEV_WRITE)
    try:
        out += [f"/dev/{n}" for n in os.listdir("/dev") if n.startswith("nvidia")]
    except OSError:
        pass
    return out


def enter(policy: SandboxPolicy, own_netns: bool = False) -> None:
    """In the child, before any worker code: no_new_privs, drop capabilities, then the Landlock ruleset and
    the seccomp filter. Raises when a layer the policy asks for cannot be applied."""
    seccomp.set_no_new_privs()
    if policy.uid >= 0:  # before the capabilities go: dropping the uid needs CAP_SETUID
        from multikernelbench.engine.worker_uid import become

        become(policy.uid, policy.gid)
    seccomp.drop_capabilities()
    if policy.landlock_abi >= 1:
        rs = landlock.Ruleset(policy.landlock_abi)
        for p in policy.read:
            rs.allow(p, landlock.READ)
        for p in policy.dev_write:
            rs.allow(p, landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE)
        # Its own /proc entries: /proc/self/task/*/comm and the like; the CUDA driver opens one with O_TRUNC
        # (without TRUNCATE, cuInit fails with error 304, found on the H200 by scripts/_probe_cuda_sandbox.py).
        rs.allow(f"/proc/{os.getpid()}", landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE)
        for p in policy.write:
            rs.allow(p, landlock.WRITE)
        rs.restrict_self()
    if policy.seccomp:
        code = policy.bpf_netns_hex if own_netns else policy.bpf_hex
        seccomp.install_filter(bytes.fromhex(code) if code else None, allow_netlink=own_netns)


def harden_trusted() -> None:
    """Parent and zygote: not dumpable, so a worker of the same uid cannot open their /proc/<pid>/mem or
    ptrace them (Landlock and seccomp stop that too; this holds even for a worker that has neither)."""
    try:
        seccomp.set_dumpable(False)
    except OSError:
        pass


def measure_enter(policy: SandboxPolicy, rounds: int = 20) -> list[tuple[float, float]]:
    """(wall, CPU) milliseconds :func:`enter` takes, each in a fresh fork (scripts/sandbox_startup_bench.py).
    The CPU time is what the sandbox costs; the wall time adds waiting for a core on a busy host."""
    times = []
    for _ in range(rounds):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                enter(policy)
                os.write(w, f"{(time.perf_counter() - t0) * 1e3} {(time.thread_time() - c0) * 1e3}".encode())
            finally:
                os._exit(0)
        os.close(w)
        data = os.read(r, 64).split()
        os.close(r)
        os.waitpid(pid, 0)
        times.append((float(data[0]), float(data[1])))
    return times
