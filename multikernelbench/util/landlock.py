"""Landlock (Linux >= 5.13) over its three raw syscalls, with ctypes: no library, no compiler.

Why not the PyPI ``landlock`` package: it is a thin wrapper over the same three syscalls, it is one more
wheel to carry to a device host that has only torch and numpy, and it did not expose the ABI 4 network rights
or the ABI 6 scopes we need when this was written. The kernel interface is small and stable (a versioned,
append-only set of access bits), so the ~100 lines below are the whole dependency.

A ruleset lists the access rights it *handles*; everything handled is denied except below the paths given a
rule. Rights the running kernel does not know are dropped from the handled set (best effort per right, the
documented way to support older kernels), and :func:`abi_version` says which ones were enforced.
"""

from __future__ import annotations

import ctypes
import os
import struct

from multikernelbench.util.procs import LIBC

# Syscall numbers are the same on every architecture that has the generic table (x86_64, aarch64, ...).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1

# Filesystem rights, with the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2: link/rename across folders
TRUNCATE = 1 << 14  # ABI 3
# IOCTL_DEV (ABI 5) is deliberately not handled: CUDA drives the GPU through ioctls on /dev/nvidia*.

_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1}
READ = EXECUTE | READ_FILE | READ_DIR
#: Rights valid on a rule for a single file (not a folder).
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
WRITE = (1 << 15) - 1  # everything handled, in a folder the worker owns

# Network rights (ABI 4): TCP bind and connect; handled with no rule = no TCP at all.
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
# Scopes (ABI 6): no connecting to abstract unix sockets, no signals, outside the sandbox's own domain.
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class LandlockError(OSError):
    pass


def _syscall(nr: int, *args) -> int:
    if LIBC is None:
        raise LandlockError(0, "no libc")
    ret = LIBC.syscall(ctypes.c_long(nr), *args)
    if ret < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, os.strerror(err))
    return ret


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, or disabled at boot)."""
    try:
        return _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except LandlockError:
        return 0


def handled_fs(abi: int) -> int:
    return _FS_BY_ABI.get(min(abi, 3), 0)


class Ruleset:
    """Build in the process to restrict, then :meth:`restrict_self` (needs no_new_privs or CAP_SYS_ADMIN)."""

    def __init__(self, abi: int, *, deny_tcp: bool = True, scope: bool = True) -> None:
        if abi < 1:
            raise LandlockError(0, "Landlock is not available in this kernel")
        self.abi = abi
        self.fs = handled_fs(abi)
        net = NET_BIND_TCP | NET_CONNECT_TCP if deny_tcp and abi >= 4 else 0
        scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if scope and abi >= 6 else 0
        # struct landlock_ruleset_attr {u64 handled_access_fs; u64 handled_access_net; u64 scoped;}; older
        # kernels take a shorter struct (the size argument says which fields exist).
        if abi >= 6:
            attr = struct.pack("=QQQ", self.fs, net, scoped)
        elif abi >= 4:
            attr = struct.pack("=QQ", self.fs, net)
        else:
            attr = struct.pack("=Q", self.fs)
        buf = ctypes.create_string_buffer(attr, len(attr))
        self.fd = _syscall(_SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))

    def allow(self, path: str, rights: int) -> bool:
        """Grant ``rights`` beneath ``path`` (a file gets only its file rights); False when the path does
        not exist (nothing to grant)."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            import stat

            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= FILE_RIGHTS
            rights &= self.fs
            if not rights:
                return False
            # struct landlock_path_beneath_attr {u64 allowed_access; s32 parent_fd;} __attribute__((packed))
            attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
            _syscall(_SYS_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(_RULE_PATH_BENEATH), attr,
                     ctypes.c_uint32(0))
            return True
        finally:
            os.close(fd)

    def restrict_self(self) -> None:
        try:
            _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0))
        finally:
            os.close(self.fd)
