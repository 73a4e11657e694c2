"""The stack keeper: refreshes a background stack's local session while the stack runs.

A local session is one presence row per worktree per machine, refreshed while a
stack runs and discarded after 24 h without refresh. A background `env up` returns, so a small
detached process (started like the stack's services: marked, recorded, logged, stopped by
`env down`) refreshes the row and exits once the stack is gone.

    python -m engine.devstack.keeper <stack-id> <worktree-root>
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REFRESH_ENV = "FRAMEWORK_DEVSTACK_REFRESH"  # seconds between refreshes (tests shorten it)
DEFAULT_REFRESH = 300.0


def run(stack_id: str, root: Path) -> int:
    from engine.devstack import stacks as registry
    from engine.devstack.checkout import detect, is_dirty
    from engine.ledger.store import Ledger

    token = os.environ.get(registry.MARK_STACK_ID, "")
    interval = float(os.environ.get(REFRESH_ENV) or DEFAULT_REFRESH)
    while True:
        time.sleep(interval)
        stack = registry.load(stack_id)
        if stack is None or stack.token != token:
            return 0  # stopped or replaced: nothing left to keep
        services = [p for p in stack.processes if p.kind != "keeper"]
        if not any(registry.is_alive(stack, p) for p in services):
            return 0
        checkout = detect(root)
        with Ledger.open(stack.project) as ledger:
            ledger.upsert_session(checkout.key, stack.env, checkout.branch, is_dirty(root))


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], Path(sys.argv[2])))
