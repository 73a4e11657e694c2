"""Workflows and runs (docs/reference-tools.md#workflow-files: workflows run AI agents that call tools
selected by tool_filter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from engine.runs.engine import execute_run
from engine.runs.store import load_run
from engine.workflows.definition import WorkflowError, load_workflow, parse_inputs
from tests.tools_fixtures import LocalServer, isolated_home, subprocess_env  # noqa: F401 - fixtures


def _workflow(tmp_path: Path, steps, **extra) -> Path:
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"steps": steps}))
    doc = {
        "name": "demo",
        "model": {"provider": "scripted", "script": "script.yaml"},
        "instructions": "do it",
        **extra,
    }
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path / "wf.yaml"


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "project"
    r.mkdir()
    (r / "notes.txt").write_text("ref: main\nTODO one\nTODO two\n")
    return r


def test_scripted_run_records_every_step_plan_and_tasks(tmp_path, root, isolated_home):
    """A run records its status, every step, and the plan and tasks; steps stream to on_step."""
    path = _workflow(
        tmp_path,
        [
            {"tool": "grep", "params": {"pattern": "{{trigger.payload.body.word}}", "output_mode": "count"}},
            {
                "tool": "create_plan",
                "params": {
                    "title": "Fix {{trigger.payload.body.word}}s",
                    "description": "d",
                    "complexity": "simple",
                    "tasks": [{"title": "first", "description": "x"}],
                },
            },
            {"tool": "update_task", "params": {"task_id": "1", "status": "completed"}},
            {"message": "found {{results.0.output}}"},
        ],
    )
    streamed = []
    record = execute_run(
        load_workflow(path),
        inputs={"trigger": {"payload": {"body": {"word": "TODO"}}}},
        root=root,
        run_id="run-test-1",
        on_step=streamed.append,
    )
    assert record.status == "succeeded", record.error
    assert [(s.kind, s.name) for s in record.steps] == [
        ("tool_call", "grep"),
        ("tool_result", "grep"),
        ("tool_call", "create_plan"),
        ("tool_result", "create_plan"),
        ("tool_call", "update_task"),
        ("tool_result", "update_task"),
        ("message", None),
    ]
    assert streamed == record.steps
    assert record.steps[0].data["params"]["pattern"] == "TODO"
    assert record.steps[-1].data["text"] == "found notes.txt:2\n"
    assert record.plan["title"] == "Fix TODOs" and record.tasks[0]["status"] == "completed"
    stored = load_run("run-test-1")
    assert stored == record
    assert (isolated_home / "runs" / "run-test-1" / "run.json").exists()


def test_tool_filter_limits_what_the_agent_may_call(tmp_path, root, isolated_home):
    """The workflow's tool_filter selects the tools; a call outside it is refused and fails a scripted run."""
    path = _workflow(
        tmp_path,
        [
            {"tool": "view", "params": {"file_path": "notes.txt"}},
            {"tool": "write", "params": {"file_path": "notes.txt", "content": "x"}},
        ],
        tool_filter=["tag:readonly"],
    )
    record = execute_run(load_workflow(path), inputs={}, root=root)
    assert record.status == "failed" and "not selected by the workflow's tool_filter" in record.error
    assert "write" not in record.tools and "view" in record.tools
    assert (root / "notes.txt").read_text().startswith("ref: main")


def test_allow_error_continues_and_missing_inputs_fail_clearly(tmp_path, root, isolated_home):
    """Scripted provider: allow_error continues past a failing call; an undefined input fails the run."""
    path = _workflow(
        tmp_path,
        [
            {"tool": "bash", "params": {"command": "exit 4"}, "allow_error": True},
            {"tool": "bash", "params": {"command": "echo {{branch}}"}},
        ],
        inputs={"branch": "main"},
    )
    record = execute_run(load_workflow(path), inputs={}, root=root)
    assert record.status == "succeeded" and record.steps[-1].data["output"] == "main\n"
    failed = execute_run(load_workflow(path), inputs={"other": 1}, root=root, run_id="run-x")
    assert failed.status == "succeeded"  # workflow inputs are defaults
    path2 = _workflow(
        tmp_path, [{"tool": "bash", "params": {"command": "echo {{trigger.payload.body.ref}}"}}]
    )
    missing = execute_run(load_workflow(path2), inputs={"trigger": {"payload": {"body": {}}}}, root=root)
    assert missing.status == "failed" and "trigger.payload.body.ref is not defined" in missing.error


def test_background_processes_end_with_the_run(tmp_path, root, isolated_home):
    """Background processes live for the run's lifetime: the run ends them."""
    path = _workflow(
        tmp_path, [{"tool": "bash", "params": {"command": "sleep 60", "run_in_background": True}}]
    )
    record = execute_run(load_workflow(path), inputs={}, root=root, run_id="run-bg")
    pid = record.steps[1].data["data"]["pid"]
    assert record.status == "succeeded"
    table = json.loads(
        (isolated_home / "runs" / "run-bg" / "session" / "processes" / "processes.json").read_text()
    )
    assert [e["status"] for e in table.values()] == ["killed"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_bad_workflow_files_are_refused(tmp_path):
    """A workflow file names the model, instructions and tool_filter; bad input is a clear error (exit 2)."""
    cases = {
        "missing.yaml": None,
        "list.yaml": "- a\n",
        "noprov.yaml": "name: x\nmodel: {provider: magic}\n",
        "broken.yaml": "name: [\n",
    }
    for name, text in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        with pytest.raises(WorkflowError) as info:
            load_workflow(tmp_path / name)
        assert info.value.exit_code == 2


def test_input_pairs_parse_json_and_nest():
    """--input k=v: JSON values when they parse, dotted keys nest."""
    assert parse_inputs(["a=1", "b=text", "trigger.payload.body.ref=main", 'c={"x": true}']) == {
        "a": 1,
        "b": "text",
        "trigger": {"payload": {"body": {"ref": "main"}}},
        "c": {"x": True},
    }
    with pytest.raises(WorkflowError):
        parse_inputs(["novalue"])


class FakeOpenAI:
    """A named fake of a remote OpenAI-compatible chat completions endpoint (a real local HTTP server)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append({"auth": request.headers.get("authorization"), "body": body})
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_messages:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "view",
                            "arguments": json.dumps({"file_path": "notes.txt", "limit": 1}),
                        },
                    }
                ],
            }
        else:
            message = {
                "role": "assistant",
                "content": "The ref is " + tool_messages[-1]["content"].split(": ")[1].splitlines()[0],
            }
        return JSONResponse({"choices": [{"message": message, "finish_reason": "stop"}]})


def test_openai_compatible_provider(tmp_path, root, isolated_home, monkeypatch):
    """OpenAI-compatible chat completions via httpx: base URL configurable, key from the environment."""
    fake = FakeOpenAI()
    app = Starlette(routes=[Route("/v1/chat/completions", fake.completions, methods=["POST"])])
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    with LocalServer(app) as url:
        (tmp_path / "wf.yaml").write_text(
            yaml.safe_dump(
                {
                    "name": "llm",
                    "instructions": "Find the ref of {{repo}}",
                    "tool_filter": ["view"],
                    "model": {
                        "provider": "openai",
                        "base_url": f"{url}/v1",
                        "model": "small",
                        "api_key_env": "TEST_LLM_KEY",
                    },
                }
            )
        )
        record = execute_run(load_workflow(tmp_path / "wf.yaml"), inputs={"repo": "demo"}, root=root)
    assert record.status == "succeeded", record.error
    assert [s.kind for s in record.steps] == ["tool_call", "tool_result", "message"]
    assert record.steps[-1].data["text"] == "The ref is main"
    first = fake.requests[0]
    assert first["auth"] == "Bearer sk-test"
    assert first["body"]["messages"][0] == {"role": "system", "content": "Find the ref of demo"}
    assert [t["function"]["name"] for t in first["body"]["tools"]] == ["view"]


def test_openai_provider_unreachable_fails_the_run(tmp_path, root, isolated_home):
    """A model endpoint that cannot be reached fails the run with a clear error (never a traceback)."""
    (tmp_path / "wf.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "llm",
                "model": {
                    "provider": "openai",
                    "base_url": "http://127.0.0.1:9/v1",
                    "model": "m",
                    "timeout": 5,
                },
            }
        )
    )
    record = execute_run(load_workflow(tmp_path / "wf.yaml"), inputs={}, root=root)
    assert record.status == "failed" and "unreachable" in record.error


def test_platform_run_streams_steps_and_sets_exit_codes(tmp_path, root, isolated_home):
    """`platform run <workflow> --input k=v` streams each call and result; exit 0/1; --json."""
    path = _workflow(
        tmp_path, [{"tool": "bash", "params": {"command": "echo hello {{name}}"}}, {"message": "bye"}]
    )
    cmd = [sys.executable, "-m", "app.main", "platform", "run", str(path), "--root", str(root)]
    env = subprocess_env(isolated_home)
    ok = cli_fork.run([*cmd, "--input", "name=ann"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[:3] == [
        '→ bash {"command": "echo hello ann"}',
        "← bash: hello ann\\n",
        "• bye",
    ]
    failed = cli_fork.run([*cmd, "--json"], capture_output=True, text=True, env=env)
    doc = json.loads(failed.stdout)
    assert failed.returncode == 1 and doc["ok"] is False and doc["run"]["status"] == "failed"
    assert "name is not defined" in doc["error"]["message"]
    missing = cli_fork.run(
        [sys.executable, "-m", "app.main", "platform", "run", "nope.yaml"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert (
        missing.returncode == 2
        and "workflow file not found" in missing.stderr
        and "Traceback" not in missing.stderr
    )
