"""Text edits of .proto files that keep the user's formatting: inject RPCs into a service, append
messages, mark a message `framework:entity`."""

from __future__ import annotations

import re

from engine.errors import InvalidInput


def _block_end(text: str, open_at: int) -> int:
    depth, i = 0, open_at
    while i < len(text):
        if text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise InvalidInput("unbalanced braces in the proto file")


def inject_rpcs(text: str, service: str, rpcs: list[str]) -> str:
    m = re.search(rf"^\s*service\s+{re.escape(service)}\s*\{{", text, re.M)
    if not m:
        raise InvalidInput(f"service {service} is not declared in the proto file")
    end = _block_end(text, m.end() - 1)
    body = "".join(f"  {line}\n" for line in rpcs)
    before = text[:end]
    return before + ("" if before.endswith("\n") else "\n") + body + text[end:]


def has_rpc(text: str, name: str) -> bool:
    return re.search(rf"^\s*rpc\s+{re.escape(name)}\s*\(", text, re.M) is not None


def has_message(text: str, name: str) -> bool:
    return re.search(rf"^\s*message\s+{re.escape(name)}\s*\{{", text, re.M) is not None


def append(text: str, block: str) -> str:
    return text.rstrip("\n") + "\n\n" + block.rstrip("\n") + "\n"


def mark_entity(text: str, message: str) -> str:
    m = re.search(rf"^message\s+{re.escape(message)}\s*\{{", text, re.M)
    if not m:
        raise InvalidInput(f"message {message} is not a top-level message of the proto file")
    head = text[:m.start()]
    if head.rstrip("\n").splitlines()[-1:] == ["// framework:entity"]:
        return text
    return head + "// framework:entity\n" + text[m.start():]
