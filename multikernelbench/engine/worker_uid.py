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

import fcntl
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO


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


class FolderHold:
    """The shared folders a live worker writes in, held for its lifetime: no worker of *another* uid takes them
    over (its start's chown) until this one has ended.

    Why: every worker start gives its writable folders to the uid it runs as (:func:`prepare`, :func:`claim`).
    Two runs of one build root whose workers run as different uids (one with ``drop_root``, one without; or a
    root reference warm-up beside ``nobody`` device workers) evaluating the same code took the candidate's build
    folder from each other mid-load: a file a ``nobody`` worker had made in its own folder (torch's build baton)
    could not be removed once a root worker's start had changed that folder to root (EACCES;
    tests/test_folder_owner.py). So each shared folder has a lock, in a folder of the trusted side only
    (:func:`lock_dir`; a candidate can neither see nor remove it, and the build root is left as it was): live
    workers hold it shared, and only while they do is the folder's owner their uid; a worker whose uid differs
    from the folder's owner takes it exclusively (waiting for the other uid's workers to end, at most
    ``wait_s``: past that it goes ahead as before this hold, so a stuck run cannot stall another for good),
    changes the owner, and holds it shared again. Workers of one uid never wait for each other. The last
    holder removes the lock file (under the exclusive lock; a holder that finds its file gone opens it again)."""

    def __init__(self) -> None:
        self._held: list[tuple[IO[bytes], Path]] = []

    def take(self, folders: Iterable[str], uid: int, gid: int, wait_s: float = 600.0) -> None:
        """For each of ``folders`` (each at most once, in a fixed order, so two starts cannot each hold one lock
        the other waits for): held shared, its owner ``uid`` when this returns (the caller's :func:`prepare` or
        :func:`claim` then changes what is inside)."""
        locks = lock_dir()
        if locks is None:
            return
        for folder in sorted(set(folders)):
            path = locks / (hashlib.sha256(os.path.realpath(folder).encode()).hexdigest()[:32] + ".lock")
            fh = _hold_as(path, folder, uid, gid, time.monotonic() + wait_s)
            if fh is not None:
                self._held.append((fh, path))

    def release(self) -> None:
        held, self._held = self._held, []
        for fh, path in held:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the last holder: nobody else has it now
                if _same_file(fh, path):
                    path.unlink()
            except OSError:
                pass  # others hold it (BlockingIOError): the last of them removes it
            fh.close()  # the lock goes with the descriptor


def lock_dir() -> Path | None:
    """The trusted side's folder of folder locks (``<tmp>/mkb-folder-locks``, root's, ``0700``); None when that
    name is taken by something else (then no hold: as before it)."""
    path = Path(tempfile.gettempdir()) / "mkb-folder-locks"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        return None
    return path


def _hold_as(path: Path, folder: str, uid: int, gid: int, deadline: float) -> IO[bytes] | None:
    """The lock held shared, with ``folder`` owned by ``uid``: a folder of another uid is changed only under the
    exclusive lock (no live worker of that uid left). Between giving up the exclusive lock and getting the shared
    one a start of the other uid may slip in and take the folder: then round again."""
    while True:
        fh = _locked(path, fcntl.LOCK_SH)
        if fh is None or _owner(folder) in (uid, None):
            return fh
        fh.close()
        fh = _locked(path, fcntl.LOCK_EX, deadline)
        _chown(folder, uid, gid)
        if fh is None:  # waited long enough: on as before this hold (see the class)
            return _locked(path, fcntl.LOCK_SH)
        fh.close()


def _locked(path: Path, op: int, deadline: float | None = None) -> IO[bytes] | None:
    """``path`` opened and locked (``op``), opened again when the last holder removed it meanwhile; an exclusive
    lock is polled until ``deadline`` (a blocking flock cannot be given one): None past it, or when the file
    cannot be opened."""
    while True:
        try:
            fh = open(path, "ab")
        except OSError:
            return None
        try:
            if deadline is None:
                fcntl.flock(fh, op)
            else:
                while True:
                    try:
                        fcntl.flock(fh, op | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= deadline:
                            fh.close()
                            return None
                        time.sleep(0.05)
        except OSError:
            fh.close()
            return None
        if _same_file(fh, path):
            return fh
        fh.close()


def _same_file(fh: IO[bytes], path: Path) -> bool:
    try:
        a, b = os.fstat(fh.fileno()), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _owner(folder: str) -> int | None:
    try:
        return os.stat(folder).st_uid
    except OSError:
        return None
