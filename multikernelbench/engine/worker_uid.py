"""Workers of a harness that runs as root run as an unprivileged uid (issue #41, "not root where avoidable").

Why: Landlock decides *which folders* a worker may read; file permissions decide *which files* in them, but
only for a process that is not root. As root, a worker could read every root-only file the read scope covers
(``/etc/shadow``, root's ``0600`` files under ``/etc``, ``/opt``, ``/run``) and ``RLIMIT_NPROC`` did not bind it.
So the child drops to ``EngineConfig.worker_uid`` (default 65534, ``nobody``) before the sandbox is entered and
before any worker code; its capabilities go with it (no ``KEEP_CAPS``), and no_new_privs keeps setuid binaries
from giving them back.

The parent (trusted, still root) prepares what the uid needs: it owns the worker's writable folders (its work
dir, its candidate's build folder, its caches: ``chown -R``), and it can walk down to every folder of the read
scope and the write list (an ancestor without the others' search bit, e.g. ``/root`` at ``0700`` when Python is
installed under it, gets ``o+x``: search only, no listing; Landlock still refuses everything outside the scope).
The GPU's device nodes (``/dev/nvidia*``) are ``0666`` on a standard driver install; a host whose nodes are
root-only needs ``EngineConfig.drop_root = False`` (then Landlock, seccomp and no capabilities still hold, not
the file permissions).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path


def prepare(uid: int, gid: int, write: Iterable[str], read: Iterable[str]) -> None:
    """In the parent, as root, before the worker starts: ``write`` folders owned by ``uid`` (recursively), and
    every ancestor of ``write`` and ``read`` searchable by others."""
    write = list(write)
    claim(write, uid, gid)
    seen: set[str] = set()
    for p in list(read) + write:
        for anc in Path(os.path.realpath(p)).parents:
            key = str(anc)
            if key in seen:
                continue
            seen.add(key)
            try:
                st = os.stat(key)
                if stat.S_ISDIR(st.st_mode) and not st.st_mode & stat.S_IXOTH:
                    os.chmod(key, stat.S_IMODE(st.st_mode) | stat.S_IXOTH)
            except OSError:
                pass


def device_nodes_open(paths: Iterable[str]) -> bool:
    """Whether every character device among ``paths`` (the GPU's nodes) may be read and written by any uid: on a
    host whose ``/dev/nvidia*`` only root may open, a worker dropped to ``nobody`` could not reach the GPU, so the
    harness keeps its workers root there (capability-less, Landlock and seccomp as always)."""
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_mode & 0o006 != 0o006:
            return False
    return True


def claim(write: Iterable[str], uid: int, gid: int) -> None:
    """In the parent, as root: ``write`` folders owned by ``uid`` again, for a worker that stays root but has no
    capabilities (``drop_root`` off): a build folder an earlier run with ``drop_root`` on left to ``nobody``, or
    files the trusted side wrote into a candidate's folder, are otherwise unwritable to it (a capability-less
    root is an ordinary uid 0 to file permissions; the relu of a reused build root failed to load that way)."""
    for folder in write:
        _chown_tree(folder, uid, gid)


def _chown_tree(folder: str, uid: int, gid: int) -> None:
    """Every entry of ``folder`` not yet owned by ``uid``/``gid`` changed (a stat per entry: a build folder holds
    tens of files, and most starts change nothing)."""
    if not _chown(folder, uid, gid):
        return
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            _chown(os.path.join(dirpath, name), uid, gid)


def _chown(path: str, uid: int, gid: int) -> bool:
    try:
        st = os.lstat(path)
        if st.st_uid != uid or st.st_gid != gid:
            os.chown(path, uid, gid, follow_symlinks=False)
        return True
    except OSError:
        return False


def become(uid: int, gid: int) -> None:
    """In the child (root), after its limits and before the sandbox: no supplementary groups, then the gid and
    uid for good (real, effective, saved). The kernel clears the parent-death signal and the dumpable flag on a
    change of credentials: both are set again (dumpable, so the worker may open its own /proc files, which the
    CUDA driver writes; other workers still cannot ptrace or read it: Landlock and seccomp)."""
    from multikernelbench.util import seccomp
    from multikernelbench.util.procs import die_with_parent

    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError(f"could not drop to uid {uid}")
    die_with_parent()
    seccomp.set_dumpable(True)
