"""A static frontend served by the gateway from its release's files (docs/reference-domains.md#a-hosted-frontends-files:
`output_kind` `static`): the files of the frontend's built output, as the release carried them.

A request path maps to a file under the output root; never outside it (`..` segments, a backslash or
a NUL are refused, and the resolved path must stay under the root). Lookup: the file itself; a
directory's `index.html`; `<path>.html` (a static export's pages); else, for a page request (GET or
HEAD of a path whose last segment has no extension), the site's `404.html` with status 404 when it
has one (a multi-page export), otherwise `index.html` with 200 (a single-page app routes on the
client). Anything else is 404. Content types come from the file name (`mimetypes`), with
`X-Content-Type-Options: nosniff`; only GET and HEAD are served (405 otherwise).

A frontend built under a base path (`base_path`, e.g. `/shop`) is served under it: `/shop/...` maps to the
output root, `/` redirects (308) to `/shop/`, anything else outside it is 404.
"""

from __future__ import annotations

import mimetypes
import posixpath
from pathlib import Path

from starlette.responses import FileResponse, RedirectResponse, Response

TEXT = {"text/html", "text/css", "text/plain", "application/javascript", "text/javascript", "application/json",
        "image/svg+xml"}


def _file(root: Path, rel: str) -> Path | None:
    """`rel` under `root` when it is a regular file that stays inside `root`, else None."""
    candidate = (root / rel).resolve() if rel else root.resolve()
    if not candidate.is_relative_to(root.resolve()):
        return None
    return candidate if candidate.is_file() else None


def find(root: Path, url_path: str) -> tuple[Path | None, int]:
    """The file that answers `url_path` and its status (see the module doc), or (None, 404)."""
    if "\\" in url_path or "\x00" in url_path:
        return None, 404
    parts = [p for p in url_path.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, 404
    rel = posixpath.join(*parts) if parts else ""
    for candidate in (rel, posixpath.join(rel, "index.html"), rel + ".html" if rel else ""):
        if candidate and (found := _file(root, candidate)) is not None:
            return found, 200
    if not rel:
        return None, 404
    if "." in parts[-1]:  # an asset that is not there
        return None, 404
    if (page := _file(root, "404.html")) is not None:
        return page, 404
    if (app := _file(root, "index.html")) is not None:
        return app, 200  # a single-page app: the client routes
    return None, 404


def serve(root: Path, method: str, url_path: str, base_path: str = "") -> Response | None:
    """The response for a request to the static site at `root` (built under `base_path`); None:
    nothing here (the caller answers its own 404 page)."""
    if method not in ("GET", "HEAD"):
        return Response("only GET and HEAD are served from a static frontend\n", status_code=405,
                        headers={"Allow": "GET, HEAD"}, media_type="text/plain")
    if base_path:
        if url_path in ("", "/"):
            return RedirectResponse(base_path + "/", status_code=308)
        if url_path != base_path and not url_path.startswith(base_path + "/"):
            return None
        url_path = url_path[len(base_path):] or "/"
    found, status = find(root, url_path)
    if found is None:
        return None
    media = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
    if media in TEXT:
        media += "; charset=utf-8"
    headers = {"X-Content-Type-Options": "nosniff",
               "Cache-Control": "no-cache" if media.startswith("text/html") else "public, max-age=300"}
    return FileResponse(found, status_code=status, media_type=media, headers=headers)
