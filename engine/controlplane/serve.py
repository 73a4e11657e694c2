"""What `platform server` mounts for the control plane: its routes, and the converger that runs
beside the app (started and stopped with the app's lifespan)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from engine.controlplane.converge import Converger
from engine.controlplane.routes import controlplane_routes
from engine.controlplane.state import runtime_root

__all__ = ["ControlPlane", "controlplane_routes"]


@dataclass
class ControlPlane:
    engine: Engine
    root: Path
    converger: Converger

    @classmethod
    def create(cls, engine: Engine, data_dir: Path) -> ControlPlane:
        try:
            timeout = float(os.environ.get("PLATFORM_ROLLOUT_TIMEOUT_S", "300"))
        except ValueError:
            timeout = 300.0
        return cls(engine, runtime_root(data_dir), Converger(engine, data_dir, rollout_timeout=timeout))

    def mount(self, app: Any) -> None:
        app.state.controlplane = self
