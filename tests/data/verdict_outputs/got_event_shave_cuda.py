# task: activation.relu
# expect: cheat_detected
# reason: GOT slot of cudaEventElapsedTime
"""GPU version of got_clock_shave.py: every GOT slot for ``cudaEventElapsedTime`` in the loaded libtorch
libraries is pointed at a function that reports 10 % less than the real time for a sample in which the candidate's
forward ran (the reference's samples are left alone), what the clock audit's terms let through on the H200 in
issue #40. The relu itself is honest (``clamp_min``)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*elapsed_fn)(float*, void*, void*);
static elapsed_fn g_real = nullptr;
static std::atomic<int64_t> g_calls{0};
static int64_t g_seen = 0;

static int fake_elapsed(float* ms, void* a, void* b) {
    int rc = g_real(ms, a, b);
    int64_t now = g_calls.load();
    if (rc == 0 && now != g_seen) *ms *= 0.9f;
    g_seen = now;
    return rc;
}

static int patch(struct dl_phdr_info* info, size_t, void*) {
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libtorch")) return 0;
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
    if (!jmprel || !symtab || !strtab) return 0;
    if (jmprel < base) jmprel += base;
    if (symtab < base) symtab += base;
    if (strtab < base) strtab += base;
    const ElfW(Rela)* rel = (const ElfW(Rela)*)jmprel;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < relsz / sizeof(ElfW(Rela)); ++k) {
        const ElfW(Sym)* sym = (const ElfW(Sym)*)symtab + ELF64_R_SYM(rel[k].r_info);
        if (strcmp((const char*)strtab + sym->st_name, "cudaEventElapsedTime") != 0) continue;
        void** slot = (void**)(base + rel[k].r_offset);
        void* start = (void*)((uintptr_t)slot & ~(uintptr_t)(page - 1));
        if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) continue;
        if (g_real) *slot = (void*)&fake_elapsed;
    }
    return 0;
}

static bool install() {
    // The runtime's own entry point (a lazily bound slot may still hold its PLT stub, which reads the slot).
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}) {
        void* h = dlopen(name, RTLD_NOLOAD | RTLD_LAZY);
        if (h && (g_real = (elapsed_fn)dlsym(h, "cudaEventElapsedTime"))) break;
    }
    if (g_real) dl_iterate_phdr(patch, nullptr);
    return g_real != nullptr;
}

torch::Tensor relu_shaved(torch::Tensor x) {
    static bool done = install();
    (void)done;
    g_calls++;
    return at::clamp_min(x, 0);
}
"""

_ext = load_inline(name="mkb_cuda_got_event_shave", cpp_sources=_CPP, functions=["relu_shaved"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_shaved(x.contiguous()) if isinstance(x, torch.Tensor) else x
