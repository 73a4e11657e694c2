"""Server side of a daemon PTY: a pump copies the daemon's output into the hub's mirror, which the
HTTP API reads from an offset. A stream drop detaches the mirror (the daemon keeps the terminal
for 30 s); the daemon's next Hello lists it and the gateway attaches it again (service._reattach).
"""

from __future__ import annotations

from typing import Any

from engine.server.gateway.hub import Call, PtyMirror


async def pump(mirror: PtyMirror, call: Call) -> None:
    while True:
        frame = await call.next()
        body = frame.WhichOneof("body")
        if body == "output":
            mirror.append(frame.output.offset, frame.output.data)
        elif body == "exit":
            mirror.exit_code = frame.exit.code
            mirror.closed = True
            mirror.changed.set()
            return
        elif body == "error":
            if frame.error.code in ("stream_lost",):
                mirror.call = None  # detached: the daemon keeps the terminal, the gateway re-attaches
            else:
                mirror.closed = True
            mirror.changed.set()
            return


def state(mirror: PtyMirror, offset: int) -> dict[str, Any]:
    import base64

    data, end = mirror.since(offset)
    return {"pty_id": mirror.pty_id, "data": base64.b64encode(data).decode(), "text": data.decode("utf-8", "replace"),
            "offset": end, "attached": mirror.call is not None, "closed": mirror.closed,
            "exit_code": mirror.exit_code}
