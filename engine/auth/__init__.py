"""Login, tokens and credentials (docs/reference-auth.md).

Server side (inside `platform server`): `tables`, `passwords`, `accounts` (organizations, users,
grants), `tokens` (minting, the one verifier every bearer check goes through), `oauth` (the
authlib authorization server), `pages` (sign-in and consent page), `routes` (the HTTP routes).
Client side (the CLIs): `credentials` (the shared credentials file and the precedence
resolvers), `login` (authorization code + PKCE over a loopback listener), `client` (token and
credential calls), `control_plane` (framework login/logout/cloud), `serve` (`auth serve`).
"""
