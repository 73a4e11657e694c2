"""The stream's message classes, generated from `assets/proto/daemon.proto` at first use.

Nothing generated is committed: the first import runs grpcio-tools' protoc on the shipped proto
into `<cache>/daemon-proto/<sha256 of the proto>[:16]/daemon_pb2.py` (temp dir + rename, so two
processes generating at once both end with a whole file) and imports it from there. A changed
proto has another hash, hence fresh code; an old directory is never reused for a new proto.
The gateway needs no generated stub: it registers `/platform.daemon.v1.Gateway/Connect` as a
generic stream-stream handler with the Frame (de)serializers from here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from engine.errors import EngineError
from engine.paths import assets_dir, cache_dir

METHOD = "/platform.daemon.v1.Gateway/Connect"


def proto_path() -> Path:
    return assets_dir() / "proto" / "daemon.proto"


def generated_dir() -> Path:
    digest = hashlib.sha256(proto_path().read_bytes()).hexdigest()[:16]
    return cache_dir() / "daemon-proto" / digest


def _generate(target: Path) -> None:
    from grpc_tools import protoc  # type: ignore[import-untyped]

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".gen-", dir=target.parent))
    source = proto_path()
    include = str(Path(protoc.__file__).parent / "_proto")
    code = protoc.main(["protoc", f"-I{source.parent}", f"-I{include}", f"--python_out={tmp}", str(source)])
    if code != 0 or not (tmp / "daemon_pb2.py").exists():
        shutil.rmtree(tmp, ignore_errors=True)
        raise EngineError(f"cannot generate the daemon protocol code from {source} (protoc exit {code})")
    try:
        os.rename(tmp, target)
    except OSError:  # another process generated it first
        shutil.rmtree(tmp, ignore_errors=True)


@cache
def pb() -> ModuleType:
    """The generated `daemon_pb2` module."""
    target = generated_dir()
    if not (target / "daemon_pb2.py").exists():
        _generate(target)
    spec = importlib.util.spec_from_file_location("platform_daemon_pb2", target / "daemon_pb2.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def Frame(**fields: Any) -> Any:  # noqa: N802 - the message's name
    return pb().Frame(**fields)


def serialize(frame: Any) -> bytes:
    return frame.SerializeToString()  # type: ignore[no-any-return]


def deserialize(data: bytes) -> Any:
    return pb().Frame.FromString(data)
