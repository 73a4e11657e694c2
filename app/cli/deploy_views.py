"""Human renderings of `env build`, `env deploy` and `env status` (plain text; colour only on a TTY)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "-"


def render_build(result: Any, out: TextIO = sys.stdout) -> None:
    if result.plan is not None:
        plan = result.plan
        out.write(
            f"build plan for {result.env}"
            + (f", release {plan['version']}" if plan["version"] else "")
            + "\n"
        )
        for b in plan["builds"]:
            out.write(f"  build {b['workload']}: {b['type'] or 'none'}\n")
        out.write(f"  {len(plan['artifacts'])} artifact(s)\n")
        for m in plan["missing"]:
            out.write(f"  MISSING {m}\n")
        if plan["exists"]:
            out.write(
                "  release exists: "
                + ("CONFLICT (different artifacts)" if plan["conflict"] else "same artifacts (no-op)")
                + "\n"
            )
        return
    for b in result.builds:
        out.write(f"{b.workload}: {b.status}" + (f" ({b.type}, {b.seconds:.1f}s)" if b.type else "") + "\n")
    if result.pushed:
        out.write("pushed artifacts to the file store\n")
    if result.release:
        verb = "cut release" if result.release_created else "release unchanged (same artifacts)"
        out.write(f"{verb} {result.release['version']}\n")


def render_deploy(result: Any, out: TextIO | None = None) -> None:
    from engine.deploy.plan import DeployPlan, render_plan_markdown

    out = out or sys.stdout
    if result.refusal and result.refusal["code"] == "declined":  # the plan was shown with the question
        out.write(f"{result.refusal['message']}\n")
        return
    plan = DeployPlan.model_validate(result.deploy_plan) if result.deploy_plan else None
    if (result.mode != "apply" or not result.applied) and result.next_step is not None:  # refused before a plan: none
        out.write(render_plan_markdown(plan, result.env, result.next_step))
    for notice in result.notices:
        out.write(f"note: {notice}\n")
    if result.explain:
        out.write("\nWhat would happen:\n" + "".join(f"  - {s}\n" for s in result.explain))
    if result.promotion and result.appended:
        out.write(
            f"promoted {result.promotion['release']} to {result.env} as {result.promotion['id']} "
            f"({result.promotion['direction']})"
            + (f", covering {', '.join(result.promotion['targets'])} only" if result.promotion.get("targets") else "")
            + "\n"
        )
    elif result.promotion:
        out.write(f"{result.env} already runs {result.promotion['release']}: nothing appended\n")
    if result.rollout:
        out.write(f"rollout: {result.rollout['phase']}\n")
        for r in result.rollout["resources"]:
            out.write(f"  {r['name']:<16} {r.get('outcome', '-'):<11} {r.get('phase', '-'):<12} "
                      f"{r.get('message', '')}\n")
    if result.refusal and result.exit_code == 0:
        out.write(f"{result.refusal['message']}\n")


def render_status(result: Any, out: TextIO = sys.stdout) -> None:
    for st in result.environments:
        out.write(f"{st.env}  ({st.kind}, {st.target or '-'})  ledger: {st.ledger.get('backend', '-')}\n")
        if st.message:
            out.write(f"  {st.message}\n")
        if st.promotion:
            prov = st.provenance or {}
            out.write(
                f"  release     {st.release}  promotion {st.promotion['id']}  ({st.promotion['direction']}, "
                f"{_when(st.promotion['created_at'])} by {st.promotion['who']})\n"
            )
            if st.promotion.get("targets"):  # an `env deploy --target` promotion: the others kept running
                out.write(f"  covered     {', '.join(st.promotion['targets'])} (--target; the others as they were)\n")
            if prov:
                out.write(
                    f"  provenance  commit {str(prov.get('commit') or '-')[:12]} branch {prov.get('branch') or '-'}"
                    f" tree {str(prov.get('tree') or '-')[:12]}{' dirty' if prov.get('dirty') else ''}\n"
                )
            out.write(f"  convergence {st.convergence}   health {st.health}\n")
            for img in st.images:
                out.write(
                    f"  image {img['name']:<12} {img['state']:<11} {str(img.get('expected_digest'))[:19]}\n"
                )
            for w in st.workloads:
                out.write(f"  workload {w['name']:<9} {w['phase']:<11} {'; '.join(w.get('checks') or [])}\n")
            for g in st.gates:
                out.write(f"  gate {g['name']:<13} {g['status']:<8} {g['summary']}\n")
        if st.ledger.get("backend") == "machine":
            age = st.ledger.get("age_seconds")
            out.write(
                f"  ledger      newest {st.ledger.get('newest_id') or '-'}, "
                f"{'-' if age is None else f'{age:.0f}s ago'} ({st.ledger.get('freshness')})\n"
            )
        for s in st.sessions:
            out.write(
                f"  session     {s['worktree']} on {s['machine']} branch {s['branch'] or '-'}"
                f"{' dirty' if s['dirty'] else ''}{' (stopped)' if s['stopped'] else ''}\n"
            )
        if st.wait:
            out.write(
                f"  wait        {st.wait.get('outcome')} (promotion {st.wait.get('promotion_id')}, "
                f"window {st.wait.get('stability_window')}s)\n"
            )
        if st.history is not None:
            for p in st.history["items"]:
                out.write(
                    f"  {p['seq']:>6}  {p['id']}  {p['release']:<28} {p['direction']:<8} {_when(p['created_at'])}\n"
                )
            if st.history["next_before"]:
                out.write(f"  more: --before {st.history['next_before']}\n")
