"""The GOT slots of a loaded shared object for named symbols, found from its own ELF file (struct-based reader).

Why: a candidate's native code can redirect the GOT entry through which libpython calls ``clock_gettime`` (or
libtorch calls ``cudaEventElapsedTime``) to a function of its own and shave every time the harness reads. The
slot addresses come from the file's dynamic relocations (``DT_JMPREL``/``DT_RELA``: ``JUMP_SLOT`` and
``GLOB_DAT`` entries), read here from disk, plus the object's load base from ``/proc/self/maps``; what the slots
hold is read from memory by the caller. Only ELF64 little-endian (x86-64 and aarch64) is read.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_STRTAB, DT_SYMTAB, DT_RELA, DT_RELASZ, DT_JMPREL, DT_PLTRELSZ = 0, 5, 6, 7, 8, 23, 2
DT_GNU_HASH = 0x6FFFFEF5
#: Relocation types that fill a GOT slot with a symbol's address: (x86-64, aarch64) GLOB_DAT and JUMP_SLOT.
SLOT_TYPES = {6, 7, 1025, 1026}


@dataclass(frozen=True)
class Slot:
    library: str  # the object's path
    symbol: str
    address: int  # where the slot lives in this process


class ElfError(ValueError):
    """A file this reader cannot parse (not ELF64 little-endian, truncated, ...)."""


def _segments(data: mmap.mmap) -> list[tuple[int, int, int, int]]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not an ELF64 little-endian file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        out.append((p_type, p_offset, p_vaddr, p_filesz))
    return out


def _file_offset(loads: list[tuple[int, int, int, int]], vaddr: int) -> int:
    for _t, off, va, size in loads:
        if va <= vaddr < va + size:
            return off + vaddr - va
    raise ElfError(f"address {vaddr:#x} is in no loaded segment")


def _cstr(data: mmap.mmap, at: int) -> str:
    end = data.find(b"\0", at)
    return data[at:end].decode("ascii", "replace")


def relocated_slots(path: str | Path, wanted: set[str]) -> dict[str, list[int]]:
    """Symbol -> the addresses of the GOT slots filled with it, relative to where the file's first page is
    mapped (its link address minus the first loaded segment's page)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as data:
        return _relocated_slots(data, wanted)


def _relocated_slots(data: mmap.mmap, wanted: set[str]) -> dict[str, list[int]]:
    """(Only the pages read are loaded: libtorch_cpu.so is hundreds of MB.)"""
    segs = _segments(data)
    loads = [s for s in segs if s[0] == PT_LOAD]
    dyn = [s for s in segs if s[0] == PT_DYNAMIC]
    if not loads or not dyn:
        return {}
    first = min(s[2] for s in loads) & ~0xFFF
    tags = _dynamic_tags(data, dyn[0])
    if DT_SYMTAB not in tags or DT_STRTAB not in tags:
        return {}
    symtab, strtab = _file_offset(loads, tags[DT_SYMTAB]), _file_offset(loads, tags[DT_STRTAB])
    tables = [(_file_offset(loads, tags[table]), tags[length])
              for table, length in ((DT_JMPREL, DT_PLTRELSZ), (DT_RELA, DT_RELASZ)) if table in tags and length in tags]
    if DT_GNU_HASH in tags:
        imported, = struct.unpack_from("<I", data, _file_offset(loads, tags[DT_GNU_HASH]) + 4)
        return _slots_of_imported(data, wanted, symtab, strtab, imported, tables, first)
    found: dict[str, list[int]] = {}
    for start, size in tables:
        view = memoryview(data)[start:start + size - size % 24]
        for r_offset, r_info, _addend in struct.iter_unpack("<QQq", view):
            if (r_info & 0xFFFFFFFF) not in SLOT_TYPES:
                continue
            name_off, = struct.unpack_from("<I", data, symtab + (r_info >> 32) * 24)
            name = _cstr(data, strtab + name_off)
            if name in wanted:
                found.setdefault(name, []).append(r_offset - first)
    return found


def _dynamic_tags(data: mmap.mmap, dynamic: tuple[int, int, int, int]) -> dict[int, int]:
    """The dynamic section's tags (the first value of each), up to DT_NULL."""
    tags: dict[int, int] = {}
    _t, off, _va, size = dynamic
    for i in range(0, size, 16):
        tag, val = struct.unpack_from("<qQ", data, off + i)
        if tag == DT_NULL:
            break
        tags.setdefault(tag, val)
    return tags


def _slots_of_imported(data: mmap.mmap, wanted: set[str], symtab: int, strtab: int, imported: int,
                       tables: list[tuple[int, int]], first: int) -> dict[str, list[int]]:
    """With a GNU hash table, imported symbols come before its first hashed one: few, so their names are read,
    and the relocations naming them are picked out with numpy (libtorch_cpu has ~10^5 relocations)."""
    index = {}
    for i in range(1, imported):
        name_off, = struct.unpack_from("<I", data, symtab + i * 24)
        name = _cstr(data, strtab + name_off)
        if name in wanted:
            index[i] = name
    found: dict[str, list[int]] = {}
    if not index:
        return found
    infos = np.array([(i << 32) | kind for i in index for kind in SLOT_TYPES], dtype=np.uint64)
    for start, size in tables:
        rel = np.frombuffer(data, dtype=np.uint64, count=size // 24 * 3, offset=start).reshape(-1, 3)
        for r_offset, r_info in rel[np.isin(rel[:, 1], infos)][:, :2].tolist():
            found.setdefault(index[r_info >> 32], []).append(r_offset - first)
        del rel  # a view of the mapping: gone before it closes
    return found


def load_bases(maps: str | None = None) -> dict[str, int]:
    """Path -> load base of every file-backed object mapped in this process (the mapping at file offset 0)."""
    text = maps if maps is not None else Path("/proc/self/maps").read_text()
    bases: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith("/") and int(parts[2], 16) == 0:
            bases.setdefault(parts[5], int(parts[0].split("-")[0], 16))
    return bases


def got_slots(library_names: tuple[str, ...], symbols: set[str]) -> list[Slot]:
    """The GOT slots, in this process, for ``symbols`` in every mapped object whose file name starts with one of
    ``library_names`` (``"libc.so"``, ``"libpython"``...). Objects that cannot be parsed are skipped."""
    out = []
    for path, base in load_bases().items():
        if not Path(path).name.startswith(library_names):
            continue
        try:
            for name, offsets in relocated_slots(path, symbols).items():
                out += [Slot(path, name, base + off) for off in offsets]
        except (OSError, ElfError, struct.error, ValueError):
            continue
    return out
