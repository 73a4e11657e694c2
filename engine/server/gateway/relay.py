"""Forward a daemon request to the server process that holds the daemon's stream (several
`platform server` processes on one PostgreSQL database; the daemon_streams row names the holder's
HTTP URL). The body streams both ways; the forwarded request is marked so it is never forwarded
again (a stale row answers 503 there instead of looping)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

FORWARDED = ("authorization", "content-type", "content-length")


async def relay(request: Request, node_url: str) -> Response:
    import httpx  # lazily: importing httpx pulls in rich (its CLI)

    client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=5))
    headers = {k: v for k, v in request.headers.items() if k in FORWARDED}
    if "transfer-encoding" in request.headers:
        headers.pop("content-length", None)
    # with the caller's Content-Length the body is forwarded with it, not chunked: the holder then
    # splices an upload into its daemon's bulk channel as it does its own callers' (engine.server.splice)
    headers["x-platform-routed"] = "1"
    url = node_url + request.url.path + (f"?{request.url.query}" if request.url.query else "")
    try:
        upstream = await client.send(
            client.build_request(request.method, url, headers=headers, content=request.stream()), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        return JSONResponse({"error": {"code": "daemon_not_connected",
                                       "message": f"the server process holding the daemon is unreachable: {exc}"},
                             "exit_code": 1}, status_code=503)

    async def body() -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()
            await client.aclose()

    keep = {k: v for k, v in upstream.headers.items() if k in ("content-type", "content-length", "x-file-size")}
    return StreamingResponse(body(), status_code=upstream.status_code, headers=keep)
