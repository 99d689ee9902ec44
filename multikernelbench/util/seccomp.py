"""A seccomp-BPF deny list, no_new_privs, capability drop and non-dumpable processes, over prctl with ctypes.

Why raw BPF instead of ``pyseccomp``/libseccomp: the filter is a fixed deny list of ~35 syscalls on two
architectures; libseccomp's compiler buys nothing for that, and ``pyseccomp`` needs ``libseccomp.so`` on the
host (the H200 host has only torch/numpy). The program below is ~90 BPF instructions, built by the parent for each worker
in microseconds.

What the filter does (returning an errno, so a library probing for a feature sees "not permitted", not a kill):

* denies ``ptrace``, ``process_vm_readv/writev``, ``kcmp``, ``pidfd_getfd`` (reading or steering another
  process), ``bpf``, the kernel-extension calls (``kexec_*``, ``*_module``), ``keyctl``/``add_key``/
  ``request_key``, every mount-family call, ``pivot_root``/``chroot``, ``unshare``/``setns``,
  ``open_by_handle_at`` and the ``io_uring`` calls (they can open sockets and files without the syscalls
  filtered here);
* ``clone`` with a namespace flag: EPERM; ``clone3``: ENOSYS (its flags sit in memory BPF cannot read; glibc
  then falls back to ``clone``);
* ``socket`` of any family but ``AF_UNIX`` (and ``AF_NETLINK`` where the worker has its own network namespace):
  EAFNOSUPPORT;
* the calls that change another process's scheduling, limits or memory placement (``setpriority``,
  ``sched_setaffinity``, ``sched_setscheduler``, ``sched_setparam``, ``sched_setattr``, ``prlimit64``,
  ``ioprio_set``, ``migrate_pages``, ``move_pages``) only on the calling process: its target must be 0 or the
  worker's own pid (and ``PRIO_PROCESS``/``IOPRIO_WHO_PROCESS``, never a group or the whole uid), else EPERM;
  ``process_madvise`` always EPERM. Why: the clean-reference worker and the prefetched next worker are same-uid
  siblings of the candidate's worker; a candidate that renices or re-pins them inflates the noise the clock
  audit's bound is made of and slows the next candidate's reference (issue #40, "starved clean worker"). The
  own pid is written into the program by :func:`install_filter` in the child (the parent builds it before the
  fork); another thread's tid of the same worker is refused too (nothing in the harness pins threads);
* ``chmod``, ``fchmod``, ``fchmodat``, ``fchmodat2`` to a mode that takes read or search away from anyone
  (``mode & 0555 != 0555``) return success without being made (errno 0): Landlock has no right for a mode
  change, so a worker that is uid 0 (``EngineConfig.drop_root`` off, or a host whose GPU nodes keep it root) could ``chmod 000``
  root-owned files in its read scope -- the shared precompiled headers, torch's libraries -- and break every
  later candidate's build and verdict. A mode that keeps everything readable and searchable (``ld``'s 0755 on
  its output) is made; refusing the others (EPERM) would break tools that set their own outputs' modes (torch
  inductor's C++ builder raises on a failed 0644), and a kept mode breaks nothing the harness runs;
* a syscall of a foreign ABI (i386 ``int 0x80``, x32) kills the process: it would bypass the numbers above.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

from multikernelbench.util.procs import LIBC

PR_SET_DUMPABLE, PR_GET_SECCOMP, PR_SET_SECCOMP = 4, 21, 22
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 24, 28, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
# BPF opcodes: ld w abs, jeq k, jge k, jset k, ret k.
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06

AF_UNIX, AF_NETLINK = 1, 16
_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

# name -> (x86_64, aarch64)
_DENY = {
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "kcmp": (312, 272),
    "pidfd_getfd": (438, 438), "bpf": (321, 280), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "chroot": (161, 51), "unshare": (272, 97), "setns": (308, 268),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "keyctl": (250, 219), "add_key": (248, 217),
    "request_key": (249, 218), "open_by_handle_at": (304, 265), "open_tree": (428, 428),
    "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "fspick": (433, 433), "mount_setattr": (442, 442), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "swapon": (167, 224), "swapoff": (168, 225),
    "reboot": (169, 142),
}
#: Mode changes that take read or search away: answered "done" without being made (see the module docstring).
#: name -> ((x86_64, aarch64: no plain chmod there), index of the mode argument).
_NO_EFFECT: dict[str, tuple[tuple[int, int | None], int]] = {
    "chmod": ((90, None), 1), "fchmod": ((91, 52), 1), "fchmodat": ((268, 53), 2), "fchmodat2": ((452, 452), 2),
}
_KEPT_BITS = 0o555  # read and search for owner, group and others
_ALU_AND = 0x54
_SOCKET, _CLONE, _CLONE3 = (41, 198), (56, 220), (435, 435)
#: Calls allowed on the calling process only: name -> ((x86_64, aarch64), index of the target argument,
#: required value of argument 0 or None). PRIO_PROCESS = 0 for setpriority, IOPRIO_WHO_PROCESS = 1.
_SELF_ONLY = {
    "setpriority": ((141, 140), 1, 0), "ioprio_set": ((251, 30), 1, 1),
    "sched_setaffinity": ((203, 122), 0, None), "sched_setscheduler": ((144, 119), 0, None),
    "sched_setparam": ((142, 118), 0, None), "sched_setattr": ((314, 274), 0, None),
    "prlimit64": ((302, 261), 0, None), "migrate_pages": ((256, 238), 0, None),
    "move_pages": ((279, 239), 0, None),
}
_PROCESS_MADVISE = (440, 440)
#: Stands for the worker's own pid in the program until :func:`install_filter` writes the real one (above
#: any pid Linux hands out: pid_max is at most 2**22).
SELF_PID_MARK = 0x7FFFFFF3
_ARCH = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}
_X32_BIT = 0x40000000


class SandboxSetupError(OSError):
    pass


def _prctl(option: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0) -> int:
    if LIBC is None:
        raise SandboxSetupError(0, "no libc")
    ret = LIBC.prctl(ctypes.c_int(option), ctypes.c_ulong(a), ctypes.c_ulong(b), ctypes.c_ulong(c),
                     ctypes.c_ulong(d))
    if ret < 0:
        err = ctypes.get_errno()
        raise SandboxSetupError(err, f"prctl({option}): {os.strerror(err)}")
    return ret


def machine() -> str:
    return platform.machine()


def available() -> bool:
    """Whether this kernel has seccomp filters, on an architecture this module knows."""
    if machine() not in _ARCH:
        return False
    try:
        _prctl(PR_GET_SECCOMP)
        return True
    except SandboxSetupError:
        return False


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def build_filter(allow_netlink: bool = False, arch: str | None = None) -> bytes:
    """The BPF program (struct sock_filter[]) for this architecture; see the module docstring."""
    audit_arch, col = _ARCH[arch or machine()]
    eperm = _RET_ERRNO | errno.EPERM
    prog = [_ins(_LD_ABS, 4), _ins(_JEQ, audit_arch, 1, 0), _ins(_RET, _RET_KILL_PROCESS), _ins(_LD_ABS, 0)]
    if col == 0:  # x32 syscalls carry the x86_64 audit arch and a high bit in the number
        prog += [_ins(_JGE, _X32_BIT, 0, 1), _ins(_RET, _RET_KILL_PROCESS)]
    for nrs in _DENY.values():
        prog += [_ins(_JEQ, nrs[col], 0, 1), _ins(_RET, eperm)]
    for mode_nrs, arg in _NO_EFFECT.values():
        nr = mode_nrs[col]
        if nr is not None:
            body = [_ins(_LD_ABS, 16 + 8 * arg), _ins(_ALU_AND, _KEPT_BITS), _ins(_JEQ, _KEPT_BITS, 0, 1),
                    _ins(_RET, _RET_ALLOW), _ins(_RET, _RET_ERRNO | 0)]
            prog += [_ins(_JEQ, nr, 0, len(body))] + body
    prog += [_ins(_JEQ, _CLONE3[col], 0, 1), _ins(_RET, _RET_ERRNO | errno.ENOSYS)]
    prog += [_ins(_JEQ, _PROCESS_MADVISE[col], 0, 1), _ins(_RET, eperm)]
    for nrs, arg, which in _SELF_ONLY.values():
        prog += _self_only(nrs[col], arg, which, eperm)
    # Tail: socket -> family check; clone -> namespace-flag check; anything else allowed.
    sock_block = [_ins(_LD_ABS, 16), _ins(_JEQ, AF_UNIX, 0, 1), _ins(_RET, _RET_ALLOW)]
    if allow_netlink:
        sock_block += [_ins(_JEQ, AF_NETLINK, 0, 1), _ins(_RET, _RET_ALLOW)]
    sock_block += [_ins(_RET, _RET_ERRNO | errno.EAFNOSUPPORT)]
    clone_block = [_ins(_LD_ABS, 16), _ins(_JSET, _NS_FLAGS, 0, 1), _ins(_RET, eperm), _ins(_RET, _RET_ALLOW)]
    # JEQ socket -> jump over (JEQ clone, RET ALLOW) to sock_block; JEQ clone -> over RET ALLOW + sock_block.
    prog += [_ins(_JEQ, _SOCKET[col], 2, 0), _ins(_JEQ, _CLONE[col], 1 + len(sock_block), 0), _ins(_RET, _RET_ALLOW)]
    prog += sock_block + clone_block
    return b"".join(prog)


def _self_only(nr: int, arg: int, which: int | None, eperm: int) -> list[bytes]:
    """Allow syscall ``nr`` when its argument ``arg`` (low 32 bits: the kernel reads a pid_t) is 0 or the own
    pid, and argument 0 equals ``which`` when given; EPERM otherwise. Leaves the syscall number in A when
    ``nr`` does not match."""
    body = []
    if which is not None:
        body += [_ins(_LD_ABS, 16), _ins(_JEQ, which, 0, 3)]  # not a single process: to the EPERM below
    body += [_ins(_LD_ABS, 16 + 8 * arg), _ins(_JEQ, 0, 2, 0), _ins(_JEQ, SELF_PID_MARK, 1, 0), _ins(_RET, eperm),
             _ins(_RET, _RET_ALLOW)]
    return [_ins(_JEQ, nr, 0, len(body))] + body


def with_own_pid(code: bytes, pid: int) -> bytes:
    """The program with :data:`SELF_PID_MARK` replaced by ``pid`` (the compare instructions' constant)."""
    out = bytearray(code)
    for i in range(0, len(out), 8):
        c, _jt, _jf, k = struct.unpack_from("=HBBI", out, i)
        if c == _JEQ and k == SELF_PID_MARK:
            struct.pack_into("=I", out, i + 4, pid)
    return bytes(out)


def install_filter(code: bytes | None = None, allow_netlink: bool = False) -> None:
    """Load the filter (``code`` from :func:`build_filter`, else built here) into this thread and what it later
    starts; needs no_new_privs first. The own-process rules name this process's pid."""
    code = with_own_pid(code if code is not None else build_filter(allow_netlink), os.getpid())
    n = len(code) // 8
    buf = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(n, ctypes.addressof(buf))
    _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def set_no_new_privs() -> None:
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def set_dumpable(flag: bool) -> None:
    """PR_SET_DUMPABLE 0: /proc/<pid>/mem and ptrace of this process need CAP_SYS_PTRACE, even for its uid."""
    _prctl(PR_SET_DUMPABLE, 1 if flag else 0)


_CAP_VERSION_3 = 0x20080522
_SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x40 | 0x80  # NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE (+locks)


def drop_capabilities() -> None:
    """Drop every capability for good: bounding set, ambient set, root's regain on exec (securebits), then the
    effective/permitted/inheritable sets. A process without capabilities does nothing here."""
    if LIBC is None:
        raise SandboxSetupError(0, "no libc")
    header = struct.pack("=Ii", _CAP_VERSION_3, 0)
    data = ctypes.create_string_buffer(24)  # two struct __user_cap_data_struct {u32 eff, perm, inh}
    hdr = ctypes.create_string_buffer(header, 8)
    if LIBC.capget(hdr, data) < 0:
        raise SandboxSetupError(ctypes.get_errno(), "capget failed")
    if not any(data.raw):
        return
    for cap in range(64):
        try:
            _prctl(PR_CAPBSET_DROP, cap)
        except SandboxSetupError as exc:
            if exc.errno == errno.EINVAL:  # past the last capability this kernel knows
                break
            raise
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    _prctl(PR_SET_SECUREBITS, _SECUREBITS)
    zero = ctypes.create_string_buffer(24)
    hdr = ctypes.create_string_buffer(header, 8)
    if LIBC.capset(hdr, zero) < 0:
        err = ctypes.get_errno()
        raise SandboxSetupError(err, f"capset: {os.strerror(err)}")


def capabilities_held() -> bool:
    """Whether this process has any effective or permitted capability (/proc/self/status)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(("CapEff:", "CapPrm:")) and int(line.split()[1], 16):
                    return True
    except OSError:
        pass
    return False
