"""nvcc's front ends forked from a parse of the prelude (backends/fe_fork.py, fe_fork.c, the split driver's
``--fe-fork``).

The fork server's mechanics and its confinement are tested on a small stand-in front end (tests/data/
fe_fork_frontend.c: it reads its input with stdio as cudafe++ and cicc do, and does what the input's lines say:
write outside its folder, crash, sleep, exit). The real round (nvcc's own front ends forked for a shipped
solution, the object compared with stock nvcc's section by section, a compile error's message) is
``tests/test_host_pch.py::test_a_shipped_solution_builds_the_same_object_with_the_precompiled_prefix``, which
builds what a run builds: host prefix and forked front ends together.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.backends import fe_fork

REPO = Path(__file__).resolve().parent.parent
NVCC = shutil.which("nvcc")
CUDAFE = ('cudafe++ --c++17 --gnu_version=120200 --orig_src_file_name "{src}" --orig_src_path_name "{src}" '
          '--m64 --gen_c_file_name "{tmp}/{x}-6_cuda.cudafe1.cpp" --stub_file_name "{x}-6_cuda.cudafe1.stub.c" '
          '--module_id_file_name "{tmp}/{x}-4_cuda.module_id" "{tmp}/{x}-5_cuda.cpp4.ii"')
CICC = ('"$CICC_PATH/cicc" --c++17 --orig_src_file_name "{src}" -arch compute_90 -m64 '
        '--include_file_name "{x}-3_cuda.fatbin.c" -tused --module_id_file_name "{tmp}/{x}-4_cuda.module_id" '
        '--gen_c_file_name "{tmp}/{x}-6_cuda.cudafe1.c" --stub_file_name "{tmp}/{x}-6_cuda.cudafe1.stub.c" '
        '--gen_device_file_name "{tmp}/{x}-6_cuda.cudafe1.gpu" "{tmp}/{x}-7_cuda.cpp1.ii" -o "{tmp}/{x}-6_cuda.ptx"')


def test_two_builds_of_one_flag_set_have_one_zygote():
    a = fe_fork.parse(CUDAFE.format(src="/b/one/cuda.cu", tmp="/tmp/w1", x="tmpxft_0001_00000000"))
    b = fe_fork.parse(CUDAFE.format(src="/b/two/cuda.cu", tmp="/tmp/w2", x="tmpxft_0777_00000000"))
    assert a is not None and b is not None
    assert a.key == b.key and a.argv == b.argv
    assert "--orig_src_file_name" in a.argv and "cuda.cu" in a.argv and "/b/one/cuda.cu" not in a.argv
    assert a.input == "/tmp/w1/tmpxft_0001_00000000-5_cuda.cpp4.ii"
    c = fe_fork.parse(CICC.format(src="/b/one/cuda.cu", tmp="/tmp/w1", x="tmpxft_0001_00000000"))
    assert c is not None and c.tool == "cicc" and c.key != a.key
    moved = fe_fork.rename_map(c, Path("/w"))
    # later commands spell the fatbin.c beside the generated files (fatbinary's --embedded-fatbin)
    assert moved["/tmp/w1/tmpxft_0001_00000000-3_cuda.fatbin.c"] == "/w/mkb_fe.fatbin.c"
    assert moved["/tmp/w1/tmpxft_0001_00000000-6_cuda.ptx"] == "/w/mkb_fe.ptx"
    other_flags = fe_fork.parse(CUDAFE.replace("--m64", "--m32").format(src="/b/cuda.cu", tmp="/t", x="x"))
    assert other_flags is not None and other_flags.key != a.key
    assert fe_fork.parse("ptxas -arch=sm_90 x.ptx -o x.cubin") is None


def test_the_prefix_is_the_probes_common_text_before_their_last_line_marker_of_the_main_file():
    """The marker that leads into the probe's own line may be spelled otherwise for a build (gcc writes blank
    lines or a marker by the gap), so the prefix stops before it."""
    head = b'# 0 "/proc/self/cwd/cuda.cu"\n# 1 "/inc/a.h" 1\nint a;\n# 2 "/proc/self/cwd/cuda.cu" 2\n'
    a = head + b'# 4 "/proc/self/cwd/cuda.cu"\nint probe_a;\n'
    b = head + b'# 4 "/proc/self/cwd/cuda.cu"\nint probe_b;\n'
    assert fe_fork.common_prefix(a, b) == head
    assert fe_fork.common_prefix(b"int x;\n", b"int y;\n") is None  # no line marker: not preprocessed text


def _frontend(tmp_path: Path) -> Path:
    exe = tmp_path / "frontend"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(REPO / "tests" / "data" / "fe_fork_frontend.c")], check=True)
    return exe


@pytest.fixture
def zygote(tmp_path):
    """A stand-in front end's zygote on a 200 KB prefix; yields (root, FrontEnd factory, prefix)."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    root, exe = tmp_path / "fe", _frontend(tmp_path)
    lib = fe_fork.build_library(root)
    prefix = b"".join(b"prelude line %06d\n" % i for i in range(10000))
    fe0 = fe_fork.FrontEnd("frontend", str(exe), ("{input}",), str(tmp_path / "none.ii"), {})
    from multikernelbench.util import seccomp

    deny = seccomp.build_filter().hex() if seccomp.available() else ""  # as cuda_warm.warm_fe_fork hands it over
    row = fe_fork.start(root, fe0, prefix, {**os.environ, "MKB_FE_IDLE_S": "60"}, lib, seccomp_hex=deny)
    assert row["state"] == "started", row

    def build(name: str, rest: bytes) -> tuple[fe_fork.FrontEnd, Path]:
        work = tmp_path / name
        work.mkdir()
        src = tmp_path / f"{name}.ii"
        src.write_bytes(prefix + rest)
        return fe_fork.FrontEnd("frontend", str(exe), ("{input}",), str(src), {}), work

    yield root, build, prefix
    fe_fork.stop_all(root)


def test_a_forked_child_reads_on_from_the_build_input(zygote):
    root, build, prefix = zygote
    results = {}

    def one(i: int) -> None:
        fe, work = build(f"b{i}", b"own line of build %d\n" % i * (i + 1) + b"RETURN %d\n" % i)
        results[i] = fe_fork.fork_run(root, fe, work, wait_s=30), work, Path(fe.input).read_bytes()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]  # four at once from one zygote
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, ((status, how, cpu), work, whole) in results.items():
        assert how == "forked" and status == i, (how, status)  # main's return value reaches the requester
        assert (work / "out.txt").read_bytes() == whole  # byte for byte what a fresh process reads
        assert cpu >= 0


def test_exit_statuses_and_a_crash(zygote):
    root, build, _ = zygote
    fe, work = build("exit", b"EXIT 7\n")
    assert fe_fork.fork_run(root, fe, work)[:2] == (7, "forked")
    fe, work = build("crash", b"CRASH\n")
    status, how, _ = fe_fork.fork_run(root, fe, work)
    assert status is None and how == "child died without a status"  # the driver then runs the stock tool


def test_a_different_prefix_is_not_served(zygote):
    root, build, prefix = zygote
    fe, work = build("other", b"x\n")
    Path(fe.input).write_bytes(b"PRELUDE" + prefix[7:] + b"x\n")
    assert fe_fork.fork_run(root, fe, work)[:2] == (None, "prefix differs")
    assert not (work / "out.txt").exists()


def test_one_command_line_with_two_prefixes_has_two_zygotes(zygote, tmp_path):
    """Flags only the preprocessor sees (``-O3`` defines ``__OPTIMIZE__``) change the prelude's text, not the
    front end's arguments: found on the H200 (2026-12-04), where the ``-O3`` builds met the other set's zygote
    and all ran stock. Each build is served by the zygote of its own prefix."""
    root, build, prefix = zygote
    other = prefix.replace(b"prelude", b"PRELUDE")
    fe, work = build("plain", b"RETURN 1\n")
    lib = next(root.glob("fe_fork-*.so"))
    row = fe_fork.start(root, fe, other, {**os.environ, "MKB_FE_IDLE_S": "60"}, lib)
    assert row["state"] == "started" and len(list(root.glob(f"{fe.key}-*"))) == 2
    assert fe_fork.fork_run(root, fe, work)[:2] == (1, "forked")
    fe2, work2 = build("optimized", b"RETURN 2\n")
    Path(fe2.input).write_bytes(other + b"RETURN 2\n")
    assert fe_fork.fork_run(root, fe2, work2)[:2] == (2, "forked")
    assert (work2 / "out.txt").read_bytes() == other + b"RETURN 2\n"


def test_a_connection_that_sends_nothing_does_not_hold_up_the_builds(zygote):
    """The attack: any process that reaches the socket (a candidate's build-time code) connects and sends
    nothing. The zygote serves one request at a time; without its 2 s receive limit every other build's front
    end waited for the stalled one (here: the client's own 10 s limit, then stock)."""
    import socket

    root, build, _ = zygote
    fe, work = build("victim", b"RETURN 0\n")
    (folder,) = root.glob(f"{fe.key}-*")
    sock, deadline = folder / "fe.sock", time.monotonic() + 30
    while not sock.exists() and time.monotonic() < deadline:  # the zygote is still reading its prefix
        time.sleep(0.05)
    stalls = []
    for _ in range(2):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = os.open(sock.parent, os.O_PATH)
        s.connect(f"/proc/self/fd/{fd}/{sock.name}")
        os.close(fd)
        stalls.append(s)
    t0 = time.monotonic()
    try:
        assert fe_fork.fork_run(root, fe, work)[:2] == (0, "forked")
    finally:
        for s in stalls:
            s.close()
    assert time.monotonic() - t0 < 8  # two stalls of 2 s each, not the 10 s fallback


def test_a_child_writes_only_its_own_folder(zygote, tmp_path):
    """The attack: a front end taken over by its input (here, the stand-in obeys its lines) creates a file outside
    its folder and opens a UDP socket. Run as stock in a plain process both succeed; forked from the zygote both
    are denied (the child's Landlock domain and seccomp filter), and the build's own output is still written."""
    root, build, _ = zygote
    target = tmp_path / "outside" / "planted.txt"
    target.parent.mkdir()
    fe, work = build("attack", f"WRITE {target}\nWRITE {tmp_path / 'attack' / 'mine.txt'}\nSOCKET\n".encode())
    plain = tmp_path / "plain"
    plain.mkdir()
    res = subprocess.run(fe.command(fe.input), cwd=plain, capture_output=True, text=True)
    assert f"write {target}: ok" in res.stderr and target.exists()  # unconfined, the attack works
    assert "udp socket: ok" in res.stderr
    target.unlink()
    err = tmp_path / "attack.err"
    with open(err, "w") as fh:
        os.dup2(fh.fileno(), 99)
    saved = os.dup(2)
    os.dup2(99, 2)
    try:
        status, how, _ = fe_fork.fork_run(root, fe, work)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(99)
    text = err.read_text()
    assert (status, how) == (0, "forked"), text
    assert f"write {target}: denied" in text and not target.exists()
    assert "mine.txt: ok" in text and (work / "mine.txt").exists()
    from multikernelbench.util import seccomp

    if seccomp.available():  # the compile workers' deny list: no socket but AF_UNIX
        assert "udp socket: denied" in text, text


def test_a_stopped_build_stops_its_forked_front_end(zygote, tmp_path):
    root, build, _ = zygote
    fe, work = build("sleeper", b"SLEEP 60\n")
    code = ("import sys; from pathlib import Path; from multikernelbench.backends import fe_fork; "
            "import json; fe = fe_fork.FrontEnd(**json.loads(sys.argv[1])); "
            "print(fe_fork.fork_run(Path(sys.argv[2]), fe, Path(sys.argv[3])))")
    spec = json.dumps({"tool": fe.tool, "exe": fe.exe, "argv": list(fe.argv), "input": fe.input, "names": {}})
    client = subprocess.Popen([sys.executable, "-c", code, spec, str(root), str(work)])
    (info,) = root.glob(f"{fe.key}-*/zygote.json")
    zpid = json.loads(info.read_text())["pid"]

    def children() -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(zpid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    deadline = time.monotonic() + 30
    while not children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children(), "no forked child appeared"
    client.send_signal(signal.SIGKILL)
    client.wait()
    deadline = time.monotonic() + 10
    while children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not children(), "the forked front end outlived its build"


def test_an_idle_zygote_ends_itself(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    root, exe = tmp_path / "fe", _frontend(tmp_path)
    fe = fe_fork.FrontEnd("frontend", str(exe), ("{input}",), "", {})
    row = fe_fork.start(root, fe, b"line\n", {**os.environ, "MKB_FE_IDLE_S": "1"}, fe_fork.build_library(root))
    deadline = time.monotonic() + 20
    while fe_fork._alive(row["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
        os.waitpid(row["pid"], os.WNOHANG)  # our child: reap it once it ends
    assert not fe_fork._alive(row["pid"]) and not (root / row["key"] / "fe.sock").exists()


def test_lanes_of_one_warmer_build_the_library_at_once(tmp_path):
    """The warmer makes each flag set's zygotes in a thread of its own; on the H200 two of them racing on one
    temporary file name lost a flag set (FileNotFoundError)."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    errors: list[Exception] = []

    def build() -> None:
        try:
            fe_fork.build_library(tmp_path)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and [p.suffix for p in tmp_path.iterdir()] == [".so"]


def test_the_build_gate_counts_the_forked_front_ends_cpu(tmp_path):
    """The forked children are not the compile worker's descendants, so /proc does not count their CPU; the
    backend adds what the split driver's reports say (capped: the build writes them)."""
    from multikernelbench.backends.cuda import CudaBackend

    rep = tmp_path / "ext" / "mkb_abc" / "mkb_cuda_host_pch.jsonl"
    rep.parent.mkdir(parents=True)
    rows = [{"fe_fork": "cudafe++", "how": "forked", "status": 0, "child_cpu_s": 5.5},
            {"fe_fork": "cicc", "how": "forked", "status": 0, "child_cpu_s": 4.25},
            {"fe_fork": "cicc", "how": "forked", "status": 0, "child_cpu_s": 1e9},  # forged: ignored
            {"source": "cuda.cu", "host_pch": "used", "host_cpu_s": 7.0}]
    rep.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    assert CudaBackend().build_cpu_elsewhere(tmp_path) == pytest.approx(9.75)
    assert CudaBackend().build_cpu_elsewhere(tmp_path / "none") == 0.0


def test_a_warmers_stop_ends_only_the_zygotes_of_its_process_group(zygote):
    """PchWarmer.stop ends its zygotes by the pids they recorded, checked against the warmer's process group (a
    pid reused since by another process is left alone); here the zygote is this test process's child."""
    root, _, _ = zygote
    (pid,) = fe_fork.zygote_pids(root)
    assert fe_fork.stop_all(root, pgid=os.getpgid(0) + 1_000_000) == 0 and fe_fork._alive(pid)
    assert fe_fork.stop_all(root, pgid=os.getpgid(0)) == 1
    os.waitpid(pid, 0)
    assert not fe_fork._alive(pid)
