"""The machine's Go caches (`go env` of the real HOME, read at import): tests give each run its own HOME, where
a cold GOCACHE would compile the standard library again. Content-addressed, safe to share between processes.
No imports of the suite's own modules (the benches import the fixture modules that use it)."""

from __future__ import annotations

import json
import shutil
import subprocess

GO_ENV: dict[str, str] = {}
if shutil.which("go"):
    GO_ENV = {k: v for k, v in json.loads(subprocess.run(
        ["go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH"], capture_output=True, text=True,
        check=True).stdout).items() if v}
