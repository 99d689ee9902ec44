# task: activation.relu
# expect: cheat_detected
# reason: GOT slot of clock_gettime
"""Exploit (issue #40, "forged clock"): when the extension loads, it finds libpython's GOT slot for
``clock_gettime`` from the library's own dynamic section (``dl_iterate_phdr``), makes the page writable and points
the slot at a function of its own. That function calls the real clock and subtracts 90 % of the time spent so far
inside the candidate's forward, which measures itself with the real clock: ``time.perf_counter`` in the harness's
timer goes through that slot, so every timed call looks ten times shorter while the reference's are untouched.
No Python object, no dispatcher kernel. Now the slot's value is compared with the one recorded before candidate
code loaded (anticheat/native_hooks.py), and the change is named."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <atomic>
#include <cstring>
#include <ctime>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*clock_fn)(clockid_t, struct timespec*);
static clock_fn g_real = nullptr;
static std::atomic<int64_t> g_shaved{0};

static int64_t real_ns() {
    struct timespec ts;
    g_real(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fake_clock(clockid_t clk, struct timespec* ts) {
    int rc = g_real(clk, ts);
    if (rc == 0 && clk == CLOCK_MONOTONIC) {
        int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec - g_shaved.load();
        ts->tv_sec = ns / 1000000000LL;
        ts->tv_nsec = ns % 1000000000LL;
    }
    return rc;
}

static int find_slot(struct dl_phdr_info* info, size_t, void* out) {
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libpython")) return 0;
    const ElfW(Dyn)* dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn)*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;
    uintptr_t base = info->dlpi_addr, jmprel = 0, symtab = 0, strtab = 0;
    size_t relsz = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_JMPREL) jmprel = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_PLTRELSZ) relsz = dyn->d_un.d_val;
        if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
    }
    if (jmprel < base) jmprel += base;
    if (symtab < base) symtab += base;
    if (strtab < base) strtab += base;
    const ElfW(Rela)* rel = (const ElfW(Rela)*)jmprel;
    for (size_t k = 0; k < relsz / sizeof(ElfW(Rela)); ++k) {
        const ElfW(Sym)* sym = (const ElfW(Sym)*)symtab + ELF64_R_SYM(rel[k].r_info);
        if (strcmp((const char*)strtab + sym->st_name, "clock_gettime") == 0) {
            *(void***)out = (void**)(base + rel[k].r_offset);
            return 1;
        }
    }
    return 0;
}

static bool redirect() {
    void** slot = nullptr;
    dl_iterate_phdr(find_slot, &slot);
    if (!slot) return false;
    g_real = &clock_gettime;  // the real one, through this library's own binding
    long page = sysconf(_SC_PAGESIZE);
    void* start = (void*)((uintptr_t)slot & ~(uintptr_t)(page - 1));
    if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return false;
    *slot = (void*)&fake_clock;
    return true;
}

static bool g_done = redirect();

torch::Tensor relu_shaved(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "contiguous float32 only");
    const int64_t t0 = g_real ? real_ns() : 0;
    auto out = torch::empty_like(x);
    const float* a = x.data_ptr<float>();
    float* c = out.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] > 0.f ? a[i] : 0.f;
    if (g_real && g_done) g_shaved += (real_ns() - t0) * 9 / 10;
    return out;
}
"""

_ext = load_inline(name="mkb_cpu_got_clock_shave", cpp_sources=_CPP, functions=["relu_shaved"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_shaved(x)
