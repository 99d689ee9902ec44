"""Upload a built dataset folder to the Hugging Face Hub with huggingface_hub's documented API.

Three calls, in order: ``HfApi.create_repo(repo_id, repo_type="dataset", exist_ok=True)``,
``HfApi.upload_folder(repo_id=..., folder_path=..., repo_type="dataset", ...)`` and, so that a given
suite can be pinned with ``load_dataset(repo_id, revision="v<version>")``, ``HfApi.create_tag``.
The calls are described by a :class:`PushPlan` built without any network access, so ``--dry-run`` and the
tests can check exactly what would be sent; only :func:`execute` talks to the Hub, and it turns a network
failure into a :class:`PushError` that says what to do. :func:`copy_to_folder` applies the same plan to a local
folder (a clone of the Hub repository, or a stand-in for it): the files ``upload_folder`` would send, and the
stale parquet files its ``delete_patterns`` would remove, so loading that folder back shows exactly what the
Hub copy will serve.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class PushError(RuntimeError):
    pass


@dataclass
class PushPlan:
    repo_id: str
    folder: Path
    version: str
    files: list[str]  # relative posix paths that upload_folder will send
    private: bool = False
    token: str | None = None  # None: huggingface_hub's own lookup (HF_TOKEN, `hf auth login`)
    tag: bool = True
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def describe(self) -> str:
        lines = [f"push {self.folder} (version {self.version}, {len(self.files)} files) to "
                 f"https://huggingface.co/datasets/{self.repo_id}"]
        for name, kwargs in self.calls:
            shown = {k: ("***" if k == "token" and v else v) for k, v in kwargs.items()}
            lines.append(f"  HfApi().{name}(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")")
        lines += [f"    {f}" for f in self.files]
        return "\n".join(lines)


def read_version(folder: Path) -> str:
    """The version recorded in the card's YAML block (written by the builder)."""
    import yaml

    text = (folder / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise PushError(f"{folder}/README.md has no YAML block: not a folder built by `mkb dataset build`")
    meta = yaml.safe_load(text.split("---\n", 2)[1]) or {}
    if "version" not in meta or "configs" not in meta:
        raise PushError(f"{folder}/README.md lacks version/configs: rebuild with `mkb dataset build`")
    return str(meta["version"])


def copy_to_folder(plan: PushPlan, dest: str | Path) -> list[Path]:
    """Leave ``dest`` as ``upload_folder`` would leave the repository: ``plan.files`` copied in, and every
    ``data/*.parquet`` that the plan does not send deleted. Returns the files written."""
    dest = Path(dest)
    if dest.resolve() == plan.folder.resolve():
        raise PushError(f"{dest} is the built folder itself; pass another folder")
    (dest / "data").mkdir(parents=True, exist_ok=True)
    for old in (dest / "data").glob("*.parquet"):
        if old.relative_to(dest).as_posix() not in plan.files:
            old.unlink()
    out = []
    for rel in plan.files:
        shutil.copyfile(plan.folder / rel, dest / rel)
        out.append(dest / rel)
    return out


def plan_push(folder: str | Path, repo_id: str, private: bool = False, token: str | None = None,
              tag: bool = True) -> PushPlan:
    """Validate the folder and repo id and describe the Hub calls; performs no network access."""
    folder = Path(folder)
    if not REPO_ID.match(repo_id):
        raise PushError(f"--repo-id must look like ORG/NAME, got {repo_id!r}")
    if not (folder / "README.md").is_file() or not list((folder / "data").glob("*.parquet")):
        raise PushError(f"{folder} is not a built dataset (needs README.md and data/*.parquet)")
    version = read_version(folder)
    files = ["README.md"] + sorted(p.relative_to(folder).as_posix() for p in (folder / "data").glob("*.parquet"))
    plan = PushPlan(repo_id=repo_id, folder=folder, version=version, files=files, private=private,
                    token=token, tag=tag)
    plan.calls.append(("create_repo", dict(repo_id=repo_id, repo_type="dataset", private=private,
                                           exist_ok=True, token=token)))
    plan.calls.append(("upload_folder", dict(
        repo_id=repo_id, folder_path=str(folder), repo_type="dataset", token=token,
        allow_patterns=["README.md", "data/*.parquet"],
        # a category that disappeared from the suite must not linger on the Hub as a stale file
        delete_patterns=["data/*.parquet"],
        commit_message=f"multikernelbench dataset {version}")))
    if tag:
        plan.calls.append(("create_tag", dict(repo_id=repo_id, tag=f"v{version}", repo_type="dataset",
                                              exist_ok=True, token=token)))
    return plan


def execute(plan: PushPlan, api: Any = None) -> list[Any]:
    """Make the planned calls in order; ``api`` defaults to ``huggingface_hub.HfApi()``."""
    if api is None:
        try:
            from huggingface_hub import HfApi
        except ImportError as exc:
            raise PushError("pushing needs huggingface_hub: pip install 'multikernelbench[data]'") from exc
        api = HfApi()
    out = []
    for name, kwargs in plan.calls:
        try:
            out.append(getattr(api, name)(**kwargs))
        except Exception as exc:
            raise PushError(f"{name} failed for {plan.repo_id}: {type(exc).__name__}: {exc}. "
                            "Check network access to huggingface.co and that you are logged in "
                            "(`hf auth login` or HF_TOKEN) with write access to the organisation.") from exc
    return out
