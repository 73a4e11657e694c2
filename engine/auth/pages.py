"""The sign-in and consent page of /oauth/authorize, and its error page (plain HTML, no script)."""

from __future__ import annotations

from html import escape

# The authorization request's parameters, carried through the form as hidden fields.
CARRIED = ("response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
           "code_challenge_method")
CLIENT_NAMES = {"platform-cli": "the platform command line", "framework-cli": "the framework command line"}

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}"
    "label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.4rem}"
    "button{margin:1rem .5rem 0 0;padding:.5rem 1rem}.error{color:#a00}code{background:#eee;padding:0 .2rem}"
)


def _page(title: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{body}</body></html>")


def consent_page(params: dict[str, str], csrf: str, server: str, scopes: list[str], error: str | None = None,
                 email: str = "") -> str:
    client = params.get("client_id", "")
    hidden = "".join(
        f'<input type=hidden name="{name}" value="{escape(params[name])}">' for name in CARRIED if params.get(name)
    )
    scope_items = "".join(f"<li><code>{escape(s)}</code></li>" for s in scopes)
    redirect = escape(params.get("redirect_uri", ""))
    body = (
        f"<h1>Sign in to {escape(server)}</h1>"
        f"<p><strong>{escape(CLIENT_NAMES.get(client, client))}</strong> (<code>{escape(client)}</code>) asks to act "
        f"for you with:</p><ul>{scope_items}</ul>"
        f"<p>It will receive the answer at <code>{redirect}</code> on this computer.</p>"
        + (f'<p class=error id=error role=alert>{escape(error)}</p>' if error else "")
        + '<form method=post action="/oauth/authorize" id=consent>'
        f'<input type=hidden name=csrf_token value="{escape(csrf)}">{hidden}'
        f'<label for=email>Email</label><input type=email id=email name=email autocomplete=username '
        f'value="{escape(email)}" required>'
        '<label for=password>Password</label><input type=password id=password name=password '
        'autocomplete=current-password required>'
        '<button type=submit id=allow name=decision value=allow>Allow</button>'
        '<button type=submit id=deny name=decision value=deny formnovalidate>Deny</button>'
        "</form>"
    )
    return _page("Sign in", body)


def error_page(message: str) -> str:
    return _page("Authorization error", f"<h1>Authorization error</h1><p class=error id=error>{escape(message)}</p>")


def done_page(ok: bool, message: str) -> str:
    """What the CLI's loopback listener shows in the browser tab."""
    title = "Signed in" if ok else "Sign-in failed"
    return _page(title, f"<h1>{title}</h1><p id=result>{escape(message)}</p><p>You can close this tab.</p>")
