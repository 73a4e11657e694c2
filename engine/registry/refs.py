"""`registry ref <env>`: `<image>@<digest>` per pushed image of an environment.

Source, first found: this machine's last push for the environment (`env build <env> --push`), else
the images the environment's current promotion froze (machine ledger). `--ci-output` appends `ref=`,
`image=` and `digest=` lines to the file named by the CI step-output variable ($GITHUB_OUTPUT), for
exactly one image (`--image` picks it when there are several).
"""

from __future__ import annotations

import json
import os

from pydantic import BaseModel

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, UsageError
from engine.project import Project
from engine.releases.images import parse_image

STEP_OUTPUT_VARIABLE = "GITHUB_OUTPUT"


class PushedImage(BaseModel):
    workload: str
    image: str
    digest: str
    ref: str


class RefResult(BaseModel):
    env: str
    source: str  # push | promotion
    images: list[PushedImage]
    ci_output: str | None = None


def _oci_images(images: dict[str, dict[str, str]]) -> list[PushedImage]:
    out = []
    for workload, info in sorted(images.items()):
        if info.get("kind") == "oci" and info.get("digest"):
            name = parse_image(info["coordinate"]).name
            out.append(PushedImage(workload=workload, image=name, digest=info["digest"],
                                   ref=f"{name}@{info['digest']}"))
    return out


def pushed_images(project: Project, env: str, spec: EnvironmentSpec | None = None
                  ) -> tuple[str, list[PushedImage]]:
    """This machine's push record, else the current promotion's oci images (from the control plane
    when `spec` is hosted: exit 2 when it cannot be read)."""
    from engine.builds.dispatch import push_record_path
    from engine.ledger.protocol import open_ledger

    try:
        pushed = _oci_images(json.loads(push_record_path(project, env).read_bytes()).get("images") or {})
    except FileNotFoundError:
        pushed = []
    except (OSError, ValueError) as exc:
        raise EngineError(f"the push record of {env!r} is unreadable: {exc}", code="push_unreadable") from exc
    if pushed:
        return "push", pushed
    with open_ledger(project, env, spec) as ledger:
        current = ledger.current(env)
    return "promotion", (_oci_images(current.images) if current else [])


def registry_ref(project: Project, env: str, *, image: str | None = None, ci_output: bool = False
                 ) -> tuple[RefResult, int]:
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    source, images = pushed_images(project, env, spec)
    if image is not None:
        images = [i for i in images if image in (i.workload, i.image)]
    if not images:
        what = f"image {image!r}" if image else "image"
        raise EngineError(f"no pushed {what} for {env!r}: nothing pushed from here and no oci image promoted",
                          code="no_pushed_image", hint=f"push first: framework env build {env} --push")
    result = RefResult(env=env, source=source, images=images)
    if ci_output:
        result.ci_output = _append_step_output(images)
    return result, 0


def _append_step_output(images: list[PushedImage]) -> str:
    target = os.environ.get(STEP_OUTPUT_VARIABLE)
    if not target:
        raise UsageError(f"--ci-output needs ${STEP_OUTPUT_VARIABLE} (the CI step-output file); it is not set")
    if len(images) != 1:
        raise UsageError(f"--ci-output writes one image's ref, and {len(images)} were pushed: "
                         f"{', '.join(i.workload for i in images)}", hint="pick one with --image <workload>")
    one = images[0]
    try:
        with open(target, "a", encoding="utf-8") as fh:  # appended: the step's other outputs stay
            fh.write(f"ref={one.ref}\nimage={one.image}\ndigest={one.digest}\n")
    except OSError as exc:
        raise EngineError(f"cannot append to ${STEP_OUTPUT_VARIABLE} ({target}): {exc.strerror}",
                          code="step_output_unwritable") from exc
    return target
