"""The three-way merge of `project upgrade` (docs/reference-project.md#merge-rules): the real `git merge-file`
(base = the file as the old version generated it, ours = the file on disk, theirs = the new version's);
conflicts are left as standard conflict markers."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel

from engine.errors import EngineError


class Merged(BaseModel):
    text: str
    conflicts: int  # conflicting hunks (0: a clean merge)


def merge(path: str, ours: str, base: str, theirs: str, *, base_label: str, theirs_label: str) -> Merged:
    """`git merge-file -p`: its stdout is the merged text, its exit code the number of conflicts (negative on error)."""
    if ours == theirs or base == theirs:
        return Merged(text=ours, conflicts=0)
    if ours == base:
        return Merged(text=theirs, conflicts=0)
    git = shutil.which("git")
    if git is None:
        raise EngineError("git is not installed: project upgrade merges edited files with `git merge-file`",
                          hint="install git")
    with tempfile.TemporaryDirectory(prefix="framework-merge-") as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            file = Path(tmp) / name
            file.write_text(text, encoding="utf-8")
            files.append(str(file))
        proc = subprocess.run([git, "merge-file", "-p", "-L", path, "-L", base_label, "-L", theirs_label, *files],
                              capture_output=True, text=True, check=False)
    if proc.returncode < 0 or proc.returncode > 127:
        raise EngineError(f"git merge-file failed on {path}: {proc.stderr.strip()}")
    return Merged(text=proc.stdout, conflicts=proc.returncode)
