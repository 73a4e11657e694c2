"""The CI run this process is part of, read from the CI system's own variables (docs/reference-ci.md#the-ci-run-id).

One place reads the CI environment. Every release cut, gate and promotion made inside CI records
`run_id`: `<run>.<attempt>` (the attempt number is part of it). The run is what a whole pipeline
shares; the attempt tells a re-run apart:

| CI | run | attempt |
|---|---|---|
| GitHub Actions | `GITHUB_RUN_ID` | `GITHUB_RUN_ATTEMPT` |
| GitLab CI | `CI_PIPELINE_ID` | `CI_JOB_ID` (a retried job is a new job) |
| Buildkite | `BUILDKITE_BUILD_ID` | `BUILDKITE_RETRY_COUNT` + 1 |
| CircleCI | `CIRCLE_WORKFLOW_ID` | `CIRCLE_BUILD_NUM` (a re-run job is a new build) |

Outside CI the run id is `local` (gates) or absent (cuts and promotions).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

LOCAL_RUN_ID = "local"


@dataclass(frozen=True)
class CiRun:
    provider: str  # github | gitlab | buildkite | circleci
    run: str
    attempt: str
    url: str | None = None

    @property
    def run_id(self) -> str:
        return f"{self.run}.{self.attempt}"


def _github(env: Mapping[str, str]) -> CiRun | None:
    run = env.get("GITHUB_RUN_ID")
    if not run:
        return None
    server, repo = env.get("GITHUB_SERVER_URL", "https://github.com"), env.get("GITHUB_REPOSITORY")
    url = f"{server}/{repo}/actions/runs/{run}" if repo else None
    return CiRun("github", run, env.get("GITHUB_RUN_ATTEMPT") or "1", url)


def _gitlab(env: Mapping[str, str]) -> CiRun | None:
    run = env.get("CI_PIPELINE_ID")
    if not run:
        return None
    return CiRun("gitlab", run, env.get("CI_JOB_ID") or "1", env.get("CI_PIPELINE_URL"))


def _buildkite(env: Mapping[str, str]) -> CiRun | None:
    run = env.get("BUILDKITE_BUILD_ID")
    if not run:
        return None
    retries = env.get("BUILDKITE_RETRY_COUNT") or "0"
    attempt = str(int(retries) + 1) if retries.isdigit() else "1"
    return CiRun("buildkite", run, attempt, env.get("BUILDKITE_BUILD_URL"))


def _circleci(env: Mapping[str, str]) -> CiRun | None:
    run = env.get("CIRCLE_WORKFLOW_ID")
    if not run:
        return None
    return CiRun("circleci", run, env.get("CIRCLE_BUILD_NUM") or "1", env.get("CIRCLE_BUILD_URL"))


def current_run(env: Mapping[str, str] | None = None) -> CiRun | None:
    """The CI run of this process, or None outside CI."""
    env = os.environ if env is None else env
    for reader in (_github, _gitlab, _buildkite, _circleci):
        found = reader(env)
        if found is not None:
            return found
    return None


def current_run_id(env: Mapping[str, str] | None = None) -> str | None:
    """`<run>.<attempt>` inside CI, None outside."""
    run = current_run(env)
    return run.run_id if run else None


def matches(recorded: str | None, wanted: str) -> bool:
    """A recorded run id belongs to `wanted`: the same id, or any attempt of the run `wanted` names."""
    if not recorded:
        return False
    return recorded == wanted or recorded.startswith(wanted + ".")
