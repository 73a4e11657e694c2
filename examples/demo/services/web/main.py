"""Demo web service: an HTML page that shows what the API says, on $PORT (default 8081)."""

import html
import os
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_URL = os.environ.get("API_URL", "http://127.0.0.1:8080")


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path == "/healthz":
            body = b"ok"
        else:
            try:
                with urllib.request.urlopen(API_URL, timeout=2) as resp:  # noqa: S310 - local demo
                    said = resp.read().decode()
            except OSError as exc:
                said = f"API unreachable: {exc}"
            body = f"<h1>demo</h1><p>{html.escape(said)}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt: str, *args: object) -> None:
        print(f"web: {fmt % args}", flush=True)


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8081"))
    print(f"web listening on 127.0.0.1:{port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
