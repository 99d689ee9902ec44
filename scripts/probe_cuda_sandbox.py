"""Which Landlock piece stops CUDA init in a worker: each variant in a fresh forked child."""

import os

import torch  # imported, CUDA not initialised (like the zygote)

from multikernelbench.engine.kernel_sandbox import SandboxPolicy
from multikernelbench.util import landlock, seccomp


def child(variant):
    wd = f"/tmp/probe_{variant}"
    os.makedirs(wd, exist_ok=True)
    pol = SandboxPolicy.for_worker({"TMPDIR": wd, "CUDA_CACHE_PATH": wd}, wd)
    seccomp.set_no_new_privs()
    seccomp.drop_capabilities()
    rs = landlock.Ruleset(pol.landlock_abi, deny_tcp=variant != "no_tcp", scope=variant != "no_scope")
    if variant == "all_root":
        rs.allow("/", landlock.WRITE)
    else:
        for p in pol.read:
            rs.allow(p, landlock.READ)
        for p in pol.dev_write:
            rs.allow(p, landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE)
        rs.allow(f"/proc/{os.getpid()}", landlock.READ | landlock.WRITE_FILE)
        for p in pol.write:
            rs.allow(p, landlock.WRITE)
        if variant == "read_root":
            rs.allow("/", landlock.READ)
        if variant.startswith("w_"):
            rs.allow("/" + variant[2:], landlock.WRITE)
        if variant.startswith("r_"):
            rs.allow("/" + variant[2:], landlock.READ)
        if variant == "pid_trunc":
            rs.allow(f"/proc/{os.getpid()}", landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE)
        if variant == "pid_all":
            rs.allow(f"/proc/{os.getpid()}", landlock.WRITE)
        if variant == "proc_trunc":
            rs.allow("/proc", landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE)
        if variant == "self_trunc":
            rs.allow("/proc/self", landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE)
    rs.restrict_self()
    try:
        n = torch.cuda.device_count()
        x = torch.ones(4, device="cuda") * 2
        torch.cuda.synchronize()
        print(variant, "OK", n, float(x.sum()), flush=True)
    except Exception as e:
        print(variant, "FAIL", repr(e)[:90], flush=True)
    os._exit(0)


for v in ["pid_trunc", "pid_all", "proc_trunc", "self_trunc"]:
    pid = os.fork()
    if pid == 0:
        child(v)
    os.waitpid(pid, 0)
