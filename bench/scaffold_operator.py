"""Bench: `framework scaffold operator` on a project of 30 services (docs/reference-authoring.md#operators-and-crds).

- `scaffold operator widgets --crd-type Widget` (with generation) against the `generate` it triggers, measured
  in the same run on the same result (`generate --full` of the scaffolded project: buf, the 30 services'
  code, controller-gen): aim <= 1.5x;
- `scaffold operator --no-generate`: aim < 300 ms.
The seed project's go.mod already requires controller-runtime (the first operator's one-time `go get` and
`go mod tidy` are network- and module-cache-bound: printed, not aimed). Best of a few rounds, each on a
fresh copy. BENCH_SMOKE=1: 2 services, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402
from engine.authoring import tools  # noqa: E402
from engine.authoring.generate import generate  # noqa: E402
from engine.authoring.operator import CONTROLLER_RUNTIME, CONTROLLER_RUNTIME_VERSION  # noqa: E402
from engine.authoring.scaffold_operator import scaffold_operator  # noqa: E402
from engine.project import Project  # noqa: E402

SERVICES, ROUNDS = (2, 1) if SMOKE else (30, 3)


def main() -> None:
    os.environ.setdefault("GOFLAGS", "-buildvcs=false")
    with tempfile.TemporaryDirectory(prefix="bench-operator-") as tmp:
        base = Path(tmp)
        seed = seed_project(base, SERVICES, 0)  # one RPC each
        go = tools.go()
        once = None if SMOKE else timed(lambda: scaffold_operator(Project(shutil.copytree(seed, base / "first")),
                                                                   "widgets", crd_type="Widget"))
        tools.run([go, "get", f"{CONTROLLER_RUNTIME}@{CONTROLLER_RUNTIME_VERSION}"], seed, "go get")
        scaffolds, gens, bare = [], [], []
        for r in range(ROUNDS):
            work = Path(shutil.copytree(seed, base / f"round{r}"))
            scaffolds.append(timed(lambda w=work: scaffold_operator(Project(w), "widgets", crd_type="Widget")))
            gens.append(timed(lambda w=work: generate(Project(w), full=True)))
            bare_dir = Path(shutil.copytree(seed, base / f"bare{r}"))
            bare.append(timed(lambda w=bare_dir: scaffold_operator(Project(w), "widgets", crd_type="Widget",
                                                                    no_generate=True)))
        assert (base / "round0" / "deploy/operators/widgets/crd/widgets.example.com_widgets.yaml").is_file()
        s, g, b = min(scaffolds), min(gens), min(bare)
        if once is not None:
            print(f"first operator of the project (go get + go mod tidy + generation): {once * 1000:.0f} ms")
        print(f"scaffold operator, {SERVICES} services: {s * 1000:.0f} ms; the generate it triggers: "
              f"{g * 1000:.0f} ms; ratio {s / g:.2f}x (aim <= 1.5x)")
        print(f"scaffold operator --no-generate: {b * 1000:.0f} ms (aim < 300 ms)")


if __name__ == "__main__":
    main()
