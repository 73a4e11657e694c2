"""Who is signed in where (the logins `platform auth status` reads), shown in the header's
sub-title next to the project: read once after the first frame, in a thread, from the local
credentials file only (no network call); nothing is added when nobody is signed in."""

from __future__ import annotations

from typing import Any


def signin_text(server_hint: str | None) -> str:
    from engine.auth.credentials import signed_in

    return ", ".join(s.label() for s in signed_in(server_hint))


def show_signin(app: Any) -> None:
    """Start the read; the header's sub-title becomes `<project> · <who @ where>, ...`."""
    hint = getattr(app.settings, "platform_server_url", "") or None

    def read() -> None:
        text = signin_text(hint)
        if text:
            app.call_from_thread(setattr, app, "sub_title", f"{app.project_dir.name} · signed in: {text}")

    app.signin_worker = app.run_worker(read, thread=True, group="signin", exclusive=True)
