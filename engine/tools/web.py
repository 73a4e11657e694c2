"""Web tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): fetch (httpx + markdownify) and
websearch (SearXNG-compatible JSON)."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from typing import Any

from engine.tools.base import Tool, ToolContext, ToolError, ToolResult, clamp, integer, schema, string

FETCH_TIMEOUT_DEFAULT = 30
FETCH_TIMEOUT_MAX = 120
FETCH_MAX_SIZE_DEFAULT = 16000
DOWNLOAD_CAP = 10 * 1024 * 1024  # what we read from the wire before converting, whatever max_size is
SEARCH_COUNT_DEFAULT = 10
SEARCH_COUNT_MAX = 20
_INVISIBLE = re.compile(r"<(script|style|head|noscript|template|svg)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
USER_AGENT = "platform-agent-tools/0.1 (+fetch)"


class _Text(HTMLParser):
    """Visible text of an HTML page (scripts, styles and head left out)."""

    SKIP = {"script", "style", "head", "noscript", "template", "svg"}
    BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre"}

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)

    def text(self) -> str:
        lines = [" ".join(line.split()) for line in "".join(self.parts).splitlines()]
        out: list[str] = []
        for line in lines:
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip() + "\n"


def _convert(body: str, content_type: str, fmt: str) -> str:
    is_html = "html" in content_type or body.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    if not is_html or fmt == "html":
        return body
    if fmt == "markdown":
        from markdownify import markdownify

        body = _INVISIBLE.sub("", body)
        return re.sub(r"\n{3,}", "\n\n", str(markdownify(body, heading_style="ATX"))).strip() + "\n"
    parser = _Text()
    parser.feed(body)
    return parser.text()


def fetch(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    import httpx

    url, fmt = params["url"], params["format"]
    if not url.startswith(("http://", "https://")):
        raise ToolError(f"url must start with http:// or https://, not {url!r}")
    timeout = clamp(params.get("timeout"), FETCH_TIMEOUT_DEFAULT, FETCH_TIMEOUT_MAX, minimum=1)
    max_size = clamp(params.get("max_size"), FETCH_MAX_SIZE_DEFAULT, DOWNLOAD_CAP, minimum=1)
    try:
        with httpx.Client(
            follow_redirects=True, timeout=timeout, headers={"User-Agent": USER_AGENT}
        ) as client:
            with client.stream("GET", url) as response:
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size >= DOWNLOAD_CAP:
                        break
                raw = b"".join(chunks)
    except httpx.TimeoutException:
        raise ToolError(f"fetch {url}: no answer within {timeout} s") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"fetch {url}: {type(exc).__name__}: {exc}") from None
    content_type = response.headers.get("content-type", "")
    if response.status_code >= 400:
        raise ToolError(f"fetch {url}: HTTP {response.status_code} {response.reason_phrase}")
    if content_type.startswith(("image/", "audio/", "video/", "application/octet-stream", "application/zip")):
        raise ToolError(f"fetch {url}: {content_type} is not text")
    text = _convert(raw.decode(response.encoding or "utf-8", errors="replace"), content_type, fmt)
    encoded = text.encode("utf-8")
    truncated = len(encoded) > max_size
    if truncated:
        text = encoded[:max_size].decode("utf-8", errors="ignore")
        text += f"\n[truncated at max_size {max_size} bytes of {len(encoded)}]\n"
    return ToolResult(
        output=text,
        data={
            "url": str(response.url),
            "status": response.status_code,
            "content_type": content_type,
            "bytes": len(encoded),
            "truncated": truncated,
        },
    )


def websearch(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    import httpx

    from engine.tools.settings import load_settings

    settings = load_settings(ctx.settings)
    if not settings.websearch_url:
        raise ToolError(
            "no web search provider is configured: set websearch_url (a SearXNG-compatible JSON "
            "endpoint) in the settings file or PLATFORM_WEBSEARCH_URL",
            code="not_configured",
        )
    count = clamp(params.get("count"), SEARCH_COUNT_DEFAULT, SEARCH_COUNT_MAX, minimum=1)
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if settings.websearch_api_key_env and os.environ.get(settings.websearch_api_key_env):
        headers["Authorization"] = f"Bearer {os.environ[settings.websearch_api_key_env]}"
    try:
        response = httpx.get(
            settings.websearch_url,
            params={"q": params["query"], "format": "json"},
            headers=headers,
            timeout=30,
            follow_redirects=True,
        )
        response.raise_for_status()
        results = response.json().get("results") or []
    except httpx.HTTPError as exc:
        raise ToolError(f"web search provider {settings.websearch_url} failed: {exc}") from None
    except (ValueError, AttributeError):
        raise ToolError(f"web search provider {settings.websearch_url} did not answer SearXNG JSON") from None
    hits = [
        {
            "title": str(r.get("title") or ""),
            "url": str(r.get("url") or ""),
            "snippet": str(r.get("content") or ""),
        }
        for r in results
        if isinstance(r, dict)
    ][:count]
    lines = [f"{n}. {h['title']}\n   {h['url']}\n   {h['snippet']}" for n, h in enumerate(hits, start=1)]
    text = "\n".join(lines) + "\n" if hits else f"no results for {params['query']!r}\n"
    return ToolResult(output=text, data={"results": hits})


TOOLS = [
    Tool(
        "fetch",
        ("web", "readonly", "default"),
        "Fetch a URL as text, markdown or html; timeout max 120 s; output max_size bytes (default 16000).",
        schema(
            {
                "url": string("http(s) URL"),
                "format": string("text, markdown or html", enum=["text", "markdown", "html"]),
                "timeout": integer("seconds; max 120", minimum=1),
                "max_size": integer("bytes; default 16000", minimum=1),
            },
            ("url", "format"),
        ),
        fetch,
    ),
    Tool(
        "websearch",
        ("web", "readonly", "default"),
        "Search the web (site:, quoted phrases and -term supported); count default 10, max 20.",
        schema(
            {
                "query": string('search query; supports site:, "quoted phrases", -term'),
                "count": integer("results; default 10; max 20", minimum=1),
            },
            ("query",),
        ),
        websearch,
    ),
]
