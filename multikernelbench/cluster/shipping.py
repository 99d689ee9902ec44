"""Moving a finished build folder between nodes as the bytes of a tar archive (through Ray's object store).

A build folder is written by a compile worker, which ran untrusted code: its contents are data, never paths
to trust. Packing follows no symlinks out of the folder; unpacking uses tarfile's ``data`` filter (no
absolute paths, no ``..``, no links leaving the folder, no device files, no setuid bits) into a fresh
temporary folder next to the destination, then renames it into place under the build folder's lock, so a
reader never sees half a folder and two lanes on one node unpack it once.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

from multikernelbench.engine.build_stage import MARKER, read_marker
from multikernelbench.util.filelock import file_lock

#: Largest build folder shipped (a CUDA extension with its objects is ~20-60 MB); a bigger one is refused
#: rather than filling the object store: its device stage then fails with this reason.
MAX_SHIPPED_BYTES = 512 * 1024 * 1024


class BuildTooLarge(RuntimeError):
    pass


def pack_build(build_dir: Path) -> bytes:
    """The build folder as tar bytes (regular files and folders only; lock files left out)."""
    buf = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(Path(build_dir).rglob("*")):
            if path.is_symlink() or path.name.endswith(".lock"):
                continue
            if path.is_file():
                total += path.stat().st_size
                if total > MAX_SHIPPED_BYTES:
                    raise BuildTooLarge(f"build folder {build_dir} is over {MAX_SHIPPED_BYTES >> 20} MiB")
            if path.is_file() or path.is_dir():
                tar.add(path, arcname=str(path.relative_to(build_dir)), recursive=False)
    return buf.getvalue()


def unpack_build(data: bytes, build_dir: Path, toolchain: dict[str, str] | None = None) -> bool:
    """Put a shipped build at ``build_dir`` unless a complete build of ``toolchain`` (the lane's
    ``Backend.toolchain()``) is there already (same node as the builder, or an earlier candidate with this code
    hash); True when it unpacked. A folder another venv on this node built is replaced, not loaded: its load
    would compile again inside the device stage (engine/build_stage.py ``read_marker``)."""
    build_dir = Path(build_dir)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    # The shipped build's own toolchain counts too: on a node unlike its builder, a second lane must not
    # replace the folder a first one unpacked and may be loading.
    shipped = _shipped_toolchain(data) if toolchain is not None else None
    fits = [toolchain] + ([shipped] if shipped is not None else [])
    if any(read_marker(build_dir, t) is not None for t in fits):
        return False
    with file_lock(build_dir.parent / f".{build_dir.name}.unpack.lock"):
        if any(read_marker(build_dir, t) is not None for t in fits):
            return False
        tmp = Path(tempfile.mkdtemp(prefix=f".{build_dir.name}.", dir=build_dir.parent))
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
                tar.extractall(tmp, filter="data")
            if build_dir.exists():  # an incomplete build (no marker) or another toolchain's is replaced, never merged
                shutil.rmtree(build_dir, ignore_errors=True)
            os.replace(tmp, build_dir)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return True


def _shipped_toolchain(data: bytes) -> dict[str, str] | None:
    """The toolchain the shipped folder's marker names (None when it has none or it is unreadable: then only
    the lane's own toolchain lets a folder stand)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            member = tar.extractfile(MARKER)
            got = json.loads(member.read()) if member is not None else {}
    except (KeyError, tarfile.TarError, ValueError, OSError):
        return None
    toolchain = got.get("toolchain") if isinstance(got, dict) else None
    return toolchain if isinstance(toolchain, dict) and toolchain else None
