"""The project: found by walking up from a directory to `framework.yaml`."""

from __future__ import annotations

import math
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from engine.errors import ConfigError, ProjectNotFound
from engine.paths import cached_json, code_identity

CONFIG_FILE = "framework.yaml"
KCL_DIR = Path("deploy") / "kcl"


class Project:
    """A checkout holding `framework.yaml`. Cheap to construct; the config is parsed on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"Project({str(self.root)!r})"

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def kcl_dir(self) -> Path:
        return self.root / KCL_DIR

    @cached_property
    def config(self) -> dict[str, Any]:
        try:
            raw = self.config_path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read {self.config_path}: {exc.strerror}") from exc
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text() reads it
        parser = _parser_identity()
        if not parser:
            return self._parse(text)
        # cached parsed (a warm command imports no YAML parser: bench/startup.py)
        data: dict[str, Any] = cached_json("config", parser.encode() + b"\0" + raw, lambda: self._parse(text),
                                           keep=lambda value: isinstance(value, dict) and _plain(value))
        return data

    def _parse(self, text: str) -> dict[str, Any]:
        import yaml

        try:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            data = yaml.load(text, Loader=loader)  # noqa: S506 - safe loader
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{self.config_path}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(f"{self.config_path}: expected a mapping at the top level")
        return data

    @property
    def name(self) -> str:
        """`name` from framework.yaml, else the directory name."""
        value = self.config.get("name")
        return str(value) if value else self.root.name

    @property
    def key(self) -> str:
        """The project's key in machine-wide stores (ledger, dev stacks): its name.

        Worktrees of one project share it, so they share one ledger.
        """
        return self.name


@lru_cache(maxsize=1)
def _parser_identity() -> str:
    return code_identity((Path(__file__),), ("yaml",))


def _plain(value: Any) -> bool:
    """JSON gives `value` back exactly: no dates, sets, non-string keys or non-finite floats."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def find_project(start: Path | None = None) -> Project:
    """Walk up from `start` (default: the current directory) to the first `framework.yaml`."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_FILE).is_file():
            return Project(candidate)
    raise ProjectNotFound(
        f"not inside a framework project: no {CONFIG_FILE} in {here} or any parent directory",
        hint="run the command from a project checkout, or create framework.yaml at its root",
    )
