"""nvcc's front ends forked from a parse of the prelude: cudafe++ and cicc stop reading torch's headers per build.

Each CUDA build's cudafe++ (host front end) and cicc (device front end) read a preprocessed file of ~14 MB
that starts with the expansion of load_inline's prelude (``torch/types.h``, ``cuda.h``, ``cuda_runtime.h``);
parsing that part is ~60 % of each front end's ~11 s (dev host, 2026-12-04). EDG's own precompiled headers
are in both binaries but crash on use outside NVRTC, so the state is shared the Unix way instead:

* **The trusted warmer** (:func:`start`) preprocesses two probes that hold only the prelude, takes their common
  text up to the prelude's last line marker (the *prefix*) and starts each front end once per flag set on the
  prefix alone, with ``fe_fork.so`` (``fe_fork.c``) preloaded. When the front end has parsed the prefix and
  asks for more input, the library turns it into a fork server on a Unix socket in the flag set's folder.
* **A build** (:func:`run`, the command the split driver writes in place of the front end) checks that its
  command is the zygote's (less per-build file names) and that its preprocessed file starts with the prefix
  byte for byte, then sends its working folder and input as file descriptors; the forked child reads on from
  the same offset, so it is the front end exactly as if it had read the build's file from the start. Anything
  else — no zygote, other flags, a different prefix, a child that crashes or cannot confine itself — runs the
  stock front end with the same relative names in the same folder. The outputs are byte-identical either way
  (``tests/test_fe_fork.py``).

File names: the front ends write under fixed relative names (``mkb_fe.*``) in a folder of the build's own;
:func:`rename_map` gives the split driver the stock names they replace in the later commands (ptxas, fatbinary,
the final host compile). ``--orig_src_file_name`` and ``--orig_src_path_name`` (the build folder's ``cuda.cu``)
are cut to the base name, for the zygote and the stock fallback alike: they change no output (tested).

Standard library only: it runs inside the nvcc driver, a plain script.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from . import warm_wait
else:  # run as a script by the split driver: beside this file, without the package (and torch)
    import warm_wait  # type: ignore[no-redef]

VERSION = "mkb-fe-fork-1"
SOURCE = Path(__file__).with_name("fe_fork.c")
STEM = "mkb_fe"
#: How long a build waits for a zygote that is still parsing the prefix (~6 s of CPU on the dev host).
WAIT_S = 20.0
#: How long a build waits for the zygote to take its request (it serves one at a time, ~ms each).
ACK_S = 10.0
#: Folders the forked child may read (besides what it was handed): the system's and the toolkit's.
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/etc", "/opt", "/proc", "/sys", "/dev")

# The flags whose values name a build's own files, per front end: (flag, the fixed relative name).
_NAMES = {
    "cudafe++": {"--gen_c_file_name": "cudafe1.cpp", "--stub_file_name": "cudafe1.stub.c",
                 "--module_id_file_name": "module_id"},
    "cicc": {"--include_file_name": "fatbin.c", "--module_id_file_name": "module_id",
             "--gen_c_file_name": "cudafe1.c", "--stub_file_name": "cudafe1.stub.c",
             "--gen_device_file_name": "cudafe1.gpu", "-o": "ptx"},
}
#: The source's name: its folder differs per build and changes no output (tested); only its base name is kept.
_BASENAME = ("--orig_src_path_name", "--orig_src_file_name")
_MARK = re.compile(rb'^# \d+ "([^"]*)"')
_REQUEST = struct.Struct("=Ii3Q")
_STATUS = struct.Struct("=id")  # exit status, the child's CPU seconds
_MAGIC = 0x6D6B6266


@dataclass(frozen=True)
class FrontEnd:
    """One front-end command, split into what is the same for every build of a flag set and what is not."""

    tool: str  # cudafe++ or cicc
    exe: str  # the command's first word as written (may be "$CICC_PATH/cicc")
    argv: tuple[str, ...]  # the rest: file names fixed, the source's name cut to its base, input "{input}"
    input: str
    names: dict[str, str]  # stock file name as written -> fixed relative name

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps([VERSION, self.tool, self.argv]).encode()).hexdigest()[:20]

    def command(self, input_path: str, exe: str | None = None) -> list[str]:
        return [exe or self.exe] + [input_path if a == "{input}" else a for a in self.argv]


def parse(cmd: str) -> FrontEnd | None:
    """A cudafe++ or cicc command of nvcc's dry run, or None when it is not one this module knows."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        return None
    if not words:
        return None
    tool = os.path.basename(words[0].replace("$CICC_PATH/", ""))
    if tool not in _NAMES:
        return None
    flags, argv, names, inputs = _NAMES[tool], [], {}, []
    i = 1
    while i < len(words):
        w = words[i]
        if w in flags and i + 1 < len(words):
            fixed = f"{STEM}.{flags[w]}"
            names[words[i + 1]] = fixed
            argv += [w, fixed]
            i += 2
        elif w in _BASENAME and i + 1 < len(words):
            argv += [w, os.path.basename(words[i + 1])]
            i += 2
        elif w.endswith(".ii") and not w.startswith("-"):
            inputs.append(w)
            argv.append("{input}")
            i += 1
        else:
            argv.append(w)
            i += 1
    if len(inputs) != 1 or len(names) != len(flags):
        return None
    return FrontEnd(tool, words[0], tuple(argv), inputs[0], names)


def rename_map(fe: FrontEnd, workdir: Path) -> dict[str, str]:
    """Stock path (absolute, as later commands spell it) -> the file in ``workdir``. A name written without a
    folder (``--stub_file_name``, ``--include_file_name``) lives beside the generated C++ file."""
    base = next(os.path.dirname(n) for n in fe.names if os.path.isabs(n))
    return {(n if os.path.isabs(n) else os.path.join(base, n)): str(workdir / fixed) for n, fixed in fe.names.items()}


def expand(exe: str, env: dict[str, str]) -> str:
    return exe.replace("$CICC_PATH", env.get("CICC_PATH", "$CICC_PATH"))


# ----------------------------------------------------------------------------------------------------------
# The warmer's side.


def build_library(root: Path) -> Path:
    """Compile ``fe_fork.c`` once per source text (gcc, a second or two) into ``root``."""
    text = SOURCE.read_bytes()
    lib = root / f"fe_fork-{hashlib.sha256(text).hexdigest()[:16]}.so"
    if lib.exists():
        return lib
    root.mkdir(parents=True, exist_ok=True)
    # one name per thread too: the warmer makes each flag set's zygotes in a lane (thread) of its own, and two
    # lanes racing on one temporary name lost one flag set's zygotes on the H200 (FileNotFoundError)
    tmp = lib.with_name(f"{lib.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    res = subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE), "-ldl", "-lpthread"],
                         capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"gcc could not build fe_fork.so: {res.stderr[-500:]}")
    os.replace(tmp, lib)
    return lib


def common_prefix(a: bytes, b: bytes) -> bytes | None:
    """What two probes' preprocessed texts share, up to (not including) the last line marker in it that names
    the main file: the prelude's part, which every build with that prelude repeats byte for byte."""
    n, lo, step = min(len(a), len(b)), 0, 1 << 16
    while lo < n and a[lo:lo + step] == b[lo:lo + step]:
        lo += step
    while lo < n and a[lo] == b[lo]:
        lo += 1
    head = a[:lo]
    first = head.split(b"\n", 1)[0]
    m = _MARK.match(first)
    if not m:
        return None
    main = m.group(1)
    cut = None
    for mm in re.finditer(rb'(?m)^# \d+ "([^"]*)".*$', head):
        if mm.group(1) == main and mm.start() > 0:
            cut = mm.start()
    return head[:cut] if cut else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start(root: Path, fe: FrontEnd, prefix: bytes, env: dict[str, str], lib: Path,
          read: tuple[str, ...] = SYSTEM_READ, seccomp_hex: str = "") -> dict:
    """Start the zygote of ``fe``'s flag set and ``prefix`` (unless a live one is there): it parses the prefix and
    then serves forks on ``root/<key>-<prefix digest>/fe.sock``; its children may read ``read`` (and write their
    own folder), under the seccomp program ``seccomp_hex`` (the compile workers'). One front-end command line may go with several prefixes: flags that only the preprocessor
    sees (``-O3`` defines ``__OPTIMIZE__``, ``-D...``) change the text, not the front end's arguments. Returns a
    report row; does not wait for the parse."""
    folder = root / f"{fe.key}-{hashlib.sha256(prefix).hexdigest()[:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    info = folder / "zygote.json"
    try:
        old = json.loads(info.read_text())
        if _alive(int(old["pid"])):
            return {"state": "present", "tool": fe.tool, "key": folder.name}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    (folder / "fe.sock").unlink(missing_ok=True)
    pre = folder / "prefix.ii"
    tmp = folder / f"prefix.ii.{os.getpid()}.tmp"
    tmp.write_bytes(prefix)
    os.replace(tmp, pre)
    work = folder / "own"  # the zygote's own outputs, should its input ever end (it does not: it serves)
    work.mkdir(exist_ok=True)
    exe = expand(fe.exe, env)
    with open(folder / "zygote.log", "wb") as log:
        proc = subprocess.Popen(fe.command(str(pre), exe), cwd=work, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=log,
                                env={**env, "TMPDIR": str(work), "LD_PRELOAD": str(lib), "MKB_FE_INPUT": str(pre),
                                     "MKB_FE_SOCK": str(folder / "fe.sock"), "MKB_FE_READ": ":".join(read),
                                     "MKB_FE_SECCOMP": seccomp_hex})
    tmp = folder / f"zygote.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"pid": proc.pid, "tool": fe.tool, "argv": list(fe.argv), "started": time.time(),
                               "prefix_bytes": len(prefix)}))
    os.replace(tmp, info)
    return {"state": "started", "tool": fe.tool, "key": folder.name, "pid": proc.pid, "prefix_bytes": len(prefix)}


def zygote_pids(root: Path) -> list[int]:
    """The pid each zygote under ``root`` recorded (alive or not)."""
    pids = []
    for info in root.glob("*/zygote.json"):
        try:
            pids.append(int(json.loads(info.read_text())["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return pids


def stop_all(root: Path, pgid: int | None = None) -> int:
    """Kill the zygotes recorded under ``root`` (with ``pgid``: only those still in that process group, so that
    a pid reused since is left alone); returns how many."""
    n = 0
    for pid in zygote_pids(root):
        try:
            if pgid is None or os.getpgid(pid) == pgid:
                os.kill(pid, 9)
                n += 1
        except OSError:
            pass
    return n


# ----------------------------------------------------------------------------------------------------------
# A build's side.


def _starts_with(path: str, prefix_path: Path) -> bool:
    with open(path, "rb") as a, open(prefix_path, "rb") as b:
        while True:
            want = b.read(1 << 20)
            if not want:
                return True
            if a.read(len(want)) != want:
                return False


def _zygote_for(root: Path, fe: FrontEnd, wait_s: float) -> tuple[Path | None, str]:
    """(socket, "") of the zygote whose prefix the build's input starts with, once it listens; (None, why) when
    there is none for these flags and this text, it died, or it is not ready within ``wait_s`` (while the
    warmer's mark stands on the root, the right zygote may still be coming)."""
    deadline = time.monotonic() + wait_s
    differ: set[Path] = set()  # folders whose prefix this input does not start with
    while True:
        found = None
        for folder in sorted(root.glob(f"{fe.key}-*")):
            if folder in differ or not (folder / "prefix.ii").exists():
                continue
            if _starts_with(fe.input, folder / "prefix.ii"):
                found = folder
                break
            differ.add(folder)
        if found is not None:
            if (found / "fe.sock").exists():
                return found / "fe.sock", ""
            try:
                pid = int(json.loads((found / "zygote.json").read_text())["pid"])
            except (OSError, ValueError, KeyError, TypeError):
                pid = None
            if pid is not None and not _alive(pid):
                return None, "zygote died"
        elif not warm_wait.warmer_active(root):
            return None, "prefix differs" if differ else "no zygote"
        if time.monotonic() > deadline:
            return None, "not ready in time"
        time.sleep(0.05)


def _limit(which: int) -> int:
    soft = resource.getrlimit(which)[0]
    return (1 << 64) - 1 if soft == resource.RLIM_INFINITY else soft


def fork_run(root: Path, fe: FrontEnd, workdir: Path, wait_s: float = WAIT_S) -> tuple[int | None, str, float]:
    """(exit status, how, the child's CPU seconds) of ``fe`` run by its zygote in ``workdir``; status None when
    the zygote could not serve it (then nothing of the front end ran and the caller runs the stock one)."""
    try:
        sock_path, why = _zygote_for(root, fe, wait_s)
    except OSError as exc:
        return None, f"unreadable: {exc!r}"[:200], 0.0
    if sock_path is None:
        return None, why, 0.0
    fds: list[int] = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            folder_fd = os.open(sock_path.parent, os.O_PATH | os.O_DIRECTORY)
            try:  # a socket's name is at most 107 bytes; its folder may lie deeper
                s.connect(f"/proc/self/fd/{folder_fd}/{sock_path.name}")
            finally:
                os.close(folder_fd)
            fds = [os.open(workdir, os.O_RDONLY | os.O_DIRECTORY), os.open(fe.input, os.O_RDONLY)]
            payload = _REQUEST.pack(_MAGIC, os.getpriority(os.PRIO_PROCESS, 0), _limit(resource.RLIMIT_AS),
                                    _limit(resource.RLIMIT_CPU), _limit(resource.RLIMIT_DATA))
            sys.stdout.flush()
            sys.stderr.flush()
            socket.send_fds(s, [payload], [*fds, 1, 2])
            # The zygote takes one request at a time: one that another process holds up (it waits 2 s for each)
            # must not hold this build up; past ACK_S it runs stock instead.
            s.settimeout(ACK_S)
            try:
                first = s.recv(1)
            except TimeoutError:
                return None, "zygote did not answer", 0.0
            # not the acknowledgement: the child's status came first (it failed its set-up), keep the byte
            data = b"" if first == b"A" else first
            s.settimeout(None)
            while True:
                chunk = s.recv(64)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        return None, f"socket: {exc!r}"[:200], 0.0
    finally:
        for fd in fds:
            os.close(fd)
    if len(data) < _STATUS.size:
        return None, "child died without a status", 0.0
    status, cpu_s = _STATUS.unpack(data[:_STATUS.size])
    if status in (96, 97, 98):  # the child could not set itself up (98: no Landlock): nothing ran
        return None, f"child setup failed ({status})", cpu_s
    return status, "forked", cpu_s


def run(root: Path, cmd: str, workdir: Path, report: Path | None = None) -> int:
    """What the split driver runs in place of a front-end command: the zygote's child, else the stock tool,
    both writing ``mkb_fe.*`` in ``workdir``."""
    fe = parse(cmd)
    if fe is None:  # the driver only writes this for commands parse() accepted
        return subprocess.run(["bash", "-c", cmd]).returncode
    module_id = next(n for n, fixed in fe.names.items() if fixed.endswith(".module_id"))
    shutil.copyfile(module_id, workdir / f"{STEM}.module_id")
    t0 = time.perf_counter()
    status, how, child_cpu = fork_run(root, fe, workdir)
    # The forked child is not this process's descendant: its CPU seconds would go uncounted in the driver's
    # account of a build (nvcc_split adds them from here).
    (workdir / f"{STEM}.{fe.tool}.cpu").write_text(f"{child_cpu:.3f}")
    if status is None:
        status = subprocess.run(fe.command(fe.input, expand(fe.exe, dict(os.environ))), cwd=workdir).returncode
        how = f"stock: {how}"
    if report is not None:
        with open(report, "a") as fh:
            fh.write(json.dumps({"fe_fork": fe.tool, "how": how, "status": status, "child_cpu_s": round(child_cpu, 3),
                                 "wall_s": round(time.perf_counter() - t0, 3)}) + "\n")
    return status


def main(argv: list[str]) -> int:
    """``python fe_fork.py ROOT WORKDIR [--report FILE] -- COMMAND``: one front-end command (as nvcc's dry run
    wrote it, one word) through :func:`run`."""
    if "--" not in argv or argv.index("--") < 2:
        print("usage: fe_fork.py ROOT WORKDIR [--report FILE] -- COMMAND", file=sys.stderr)
        return 2
    head, cmd = argv[:argv.index("--")], " ".join(argv[argv.index("--") + 1:])
    report = Path(head[head.index("--report") + 1]) if "--report" in head else None
    return run(Path(head[0]), cmd, Path(head[1]), report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
