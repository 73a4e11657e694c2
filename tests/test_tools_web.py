"""Web tools (docs/reference-tools.md#tools-parameters-defaults-and-limits) against real local HTTP servers.

The search service is remote in production; `FakeSearxng` is a named fake of it that answers the
SearXNG JSON shape on 127.0.0.1.
"""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route

from tests.tools_fixtures import LocalServer, call, ctx, isolated_home  # noqa: F401 - fixtures

PAGE = (
    "<html><head><title>T</title><style>.x{}</style><script>var a=1;</script></head><body>"
    "<h1>Hello</h1><p>Some <b>bold</b> text with a <a href='https://e.org'>link</a>.</p>"
    "<ul><li>one</li><li>two</li></ul></body></html>"
)


async def page(request):
    return HTMLResponse(PAGE)


async def big(request):
    return PlainTextResponse("z" * 50000)


async def missing(request):
    return PlainTextResponse("nope", status_code=404)


async def search(request):
    q = request.query_params["q"]
    assert request.query_params["format"] == "json"
    return JSONResponse(
        {
            "query": q,
            "results": [
                {"title": f"Result {i} for {q}", "url": f"https://example.org/{i}", "content": f"snippet {i}"}
                for i in range(30)
            ],
        }
    )


@pytest.fixture(scope="module")
def site():
    app = Starlette(
        routes=[
            Route("/page", page),
            Route("/big", big),
            Route("/missing", missing),
            Route("/redirect", lambda r: HTMLResponse("", 302, headers={"location": "/page"})),
            Route("/search", search),
        ]
    )  # FakeSearxng
    with LocalServer(app) as url:
        yield url


def test_fetch_formats(ctx, site):
    """fetch: format text, markdown or html."""
    html = call(ctx, "fetch", url=f"{site}/page", format="html")
    assert html.output == PAGE
    md = call(ctx, "fetch", url=f"{site}/redirect", format="markdown")
    assert "# Hello" in md.output and "**bold**" in md.output and "[link](https://e.org)" in md.output
    assert "var a" not in md.output
    text = call(ctx, "fetch", url=f"{site}/page", format="text")
    assert "Hello" in text.output and "Some bold text with a link." in text.output
    assert "<" not in text.output and "var a" not in text.output


def test_fetch_max_size_default_16000(ctx, site):
    """fetch: max_size bytes, default 16000."""
    result = call(ctx, "fetch", url=f"{site}/big", format="text")
    assert result.data["truncated"] and result.output.startswith("z" * 16000 + "\n[truncated")
    assert call(ctx, "fetch", url=f"{site}/big", format="text", max_size=10).output.startswith(
        "z" * 10 + "\n["
    )


def test_fetch_errors_and_timeout_cap(ctx, site):
    """fetch: HTTP errors and bad URLs are clear tool errors; timeout max 120 s is clamped."""
    assert "HTTP 404" in call(ctx, "fetch", url=f"{site}/missing", format="text").output
    assert call(ctx, "fetch", url="ftp://x", format="text").is_error
    assert not call(ctx, "fetch", url=f"{site}/page", format="text", timeout=100000).is_error


def test_websearch_through_a_configured_provider(ctx, site):
    """websearch: a SearXNG-compatible JSON provider; count default 10, max 20."""
    ctx.settings = {"websearch_url": f"{site}/search"}
    result = call(ctx, "websearch", query='site:example.org "exact phrase" -spam')
    assert len(result.data["results"]) == 10
    assert result.data["results"][0]["title"] == 'Result 0 for site:example.org "exact phrase" -spam'
    assert len(call(ctx, "websearch", query="q", count=50).data["results"]) == 20


def test_websearch_without_a_provider_is_a_clear_error(ctx):
    """websearch: a clear error when no provider is configured."""
    result = call(ctx, "websearch", query="anything")
    assert result.is_error and "no web search provider is configured" in result.output
