"""Login, tokens and credentials (docs/reference-auth.md).

Server side (inside `platform server`): `tables`, `passwords`, `accounts` (organizations, users,
grants), `bearer` (minting a bearer token, its stored sha256, the constant-time check; trigger
tokens use it too), `tokens` (the token service, the one verifier every bearer check goes
through), `oauth` (the authlib authorization server), `pages` (sign-in and consent page),
`routes` (the HTTP routes).
Client side (the CLIs): `credentials` (the shared credentials file and the precedence
resolvers), `login` (authorization code + PKCE over a loopback listener), `client` (token and
credential calls), `serve` (`auth serve`). `framework login|logout|cloud` are engine.cloud.account.
"""
