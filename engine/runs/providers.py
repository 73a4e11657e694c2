"""Model providers: what decides the next tool calls of a run.

- `scripted`: replays a file of tool calls (deterministic automations and tests). Format (YAML
  or JSON), each step one turn:

      steps:
        - tool: grep
          params: {pattern: "TODO", path: "{{trigger.payload.body.dir}}"}
        - tool: bash
          params: {command: "false"}
          allow_error: true          # default false: an error result fails the run
        - message: "Found {{results.0.data.total}} files"

  Strings in `params` and `message` are templates over the run's inputs plus `results` (the
  earlier tool results of this run, in order: `output`, `is_error`, `data`).
- `openai`: an OpenAI-compatible chat completions endpoint (`base_url`, `model`, key read from
  the environment variable named by `api_key_env`), with the selected tools as functions.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from engine.runs.template import render
from engine.tools.base import Tool, ToolResult
from engine.workflows.script import ProviderError, load_script


@dataclass
class ToolCall:
    id: str
    name: str
    params: Any
    allow_error: bool = True


@dataclass
class Turn:
    message: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


class Provider(ABC):
    """A model: produces the next turn, then receives the results of that turn's tool calls."""

    @abstractmethod
    def next_turn(self) -> Turn: ...

    @abstractmethod
    def tool_results(self, results: list[tuple[ToolCall, ToolResult]]) -> None: ...


class ScriptedProvider(Provider):
    def __init__(self, model: dict[str, Any], inputs: dict[str, Any]) -> None:
        self.steps = load_script(model)
        self.inputs = inputs
        self.results: list[dict[str, Any]] = []
        self.position = 0

    def next_turn(self) -> Turn:
        if self.position >= len(self.steps):
            return Turn()
        step = self.steps[self.position]
        self.position += 1
        context = {**self.inputs, "results": self.results}
        if "message" in step:
            return Turn(
                message=str(render(step["message"], context)),
                tool_calls=[] if self.position >= len(self.steps) else [],
            )
        params = render(step.get("params") or {}, context)
        return Turn(
            tool_calls=[
                ToolCall(
                    id=f"call-{self.position}",
                    name=str(step["tool"]),
                    params=params,
                    allow_error=bool(step.get("allow_error", False)),
                )
            ]
        )

    def finished(self) -> bool:
        return self.position >= len(self.steps)

    def tool_results(self, results: list[tuple[ToolCall, ToolResult]]) -> None:
        for _, result in results:
            self.results.append(result.model_dump())


class OpenAIProvider(Provider):
    """Chat completions with tools, over httpx; the conversation is kept here."""

    def __init__(
        self, model: dict[str, Any], instructions: str, inputs: dict[str, Any], tools: dict[str, Tool]
    ) -> None:
        self.base_url = str(model.get("base_url") or "https://api.openai.com/v1").rstrip("/")
        self.model = str(model["model"])
        self.timeout = float(model.get("timeout", 120))
        self.extra: dict[str, Any] = {k: model[k] for k in ("temperature", "max_tokens") if k in model}
        key_env = model.get("api_key_env") or "OPENAI_API_KEY"
        self.api_key = os.environ.get(str(key_env))
        if not self.api_key and model.get("api_key_required", True) and "api_key_env" in model:
            raise ProviderError(f"environment variable {key_env} (model.api_key_env) is not set")
        self.tools = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.schema},
            }
            for t in tools.values()
        ]
        user = "Inputs:\n" + json.dumps(inputs, indent=2) if inputs else "Begin."
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": instructions},
            {"role": "user", "content": user},
        ]

    def next_turn(self) -> Turn:
        import httpx

        body: dict[str, Any] = {"model": self.model, "messages": self.messages, **self.extra}
        if self.tools:
            body["tools"] = self.tools
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.post(
                f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout
            )
        except httpx.HTTPError as exc:
            raise ProviderError(f"model endpoint {self.base_url} unreachable: {exc}") from None
        if response.status_code != 200:
            raise ProviderError(f"model endpoint answered {response.status_code}: {response.text[:300]}")
        try:
            message = response.json()["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProviderError("model endpoint answered without choices[0].message") from None
        self.messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        calls = []
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                params = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                params = {"_unparsable_arguments": fn.get("arguments")}
            calls.append(ToolCall(id=str(call.get("id")), name=str(fn.get("name")), params=params))
        return Turn(message=message.get("content"), tool_calls=calls)

    def tool_results(self, results: list[tuple[ToolCall, ToolResult]]) -> None:
        for call, result in results:
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result.output})


def make_provider(
    model: dict[str, Any], instructions: str, inputs: dict[str, Any], tools: dict[str, Tool]
) -> Provider:
    if model.get("provider") == "scripted":
        return ScriptedProvider(model, inputs)
    if model.get("provider") == "openai":
        return OpenAIProvider(model, instructions, inputs, tools)
    raise ProviderError(f"unknown model provider {model.get('provider')!r}")
