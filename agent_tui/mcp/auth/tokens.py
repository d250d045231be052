"""What is kept of an HTTP MCP server's OAuth login: one owner-only JSON file per
server and URL (the SDK's ``TokenStorage``), holding the registered client, the
tokens with the time they expire, the authorization server's metadata they came
from, the scope a server asked for later, and a client secret or private key the
user gave (each bound to the authorization server the user named with it, else to the
one it was first sent to)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken

from agent_tui.atomic import write_atomic
from agent_tui.paths import private_dir
from agent_tui.settings.mcp_servers import ServerConfig


def token_path(auth_dir: Path, config: ServerConfig) -> Path:
    """The server's file: by name and URL, so a server given another URL starts afresh."""
    digest = hashlib.sha256((config.url or "").encode()).hexdigest()[:12]
    return auth_dir / f"{config.name}-{digest}.json"


class TokenFile:
    """The SDK's ``TokenStorage``: one owner-only JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        private_dir(self.path.parent)
        write_atomic(self.path.parent, self.path.name, json.dumps(data, indent=1).encode(), mode=0o600,
                     exact_mode=True)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        if not isinstance(raw, dict):
            return None
        expires_at = raw.pop("expires_at", None)
        try:
            token = OAuthToken.model_validate(raw)
        except ValueError:
            return None
        if isinstance(expires_at, (int, float)):
            token.expires_in = max(0, int(expires_at - time.time()))
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._read()
        raw = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            raw["expires_at"] = time.time() + tokens.expires_in
        data["tokens"] = raw
        self._write(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self._read().get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = self._read()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)

    def forget(self, *, client: bool = False) -> None:
        """Drop the tokens (and the registered client too)."""
        data = self._read()
        if not data:
            return
        data.pop("tokens", None)
        if client:
            for key in ("client", "scope", "secret", "key", "server", "idp", "auth_server"):
                data.pop(key, None)
        self._write(data)

    def has_tokens(self) -> bool:
        return isinstance(self._read().get("tokens"), dict)

    def wanted_scope(self) -> str | None:
        """The scope a server asked for after a login (step-up): the next login asks for it."""
        scope = self._read().get("scope")
        return scope if isinstance(scope, str) and scope else None

    def want_scope(self, scope: str | None) -> None:
        if scope and scope != self.wanted_scope():
            data = self._read()
            data["scope"] = scope
            self._write(data)

    def _given(self, kind: str, client_id: str, field: str) -> str | None:
        raw = self._read().get(kind)
        if isinstance(raw, dict) and raw.get("client_id") == client_id and isinstance(raw.get(field), str):
            return str(raw[field])
        return None

    def _give(self, kind: str, value: dict[str, str]) -> None:
        """Keep what the user gave; the registered client is built again with it."""
        data = self._read()
        data[kind] = value
        data.pop("client", None)
        data.pop("tokens", None)
        self._write(data)

    def client_secret(self, client_id: str) -> str | None:
        """The secret the user gave for the pre-registered ``client_id`` (None for another id)."""
        return self._given("secret", client_id, "client_secret")

    def client_key(self, client_id: str) -> str | None:
        """The private key (PEM) the user gave for ``client_id`` (``private_key_jwt``)."""
        return self._given("key", client_id, "pem")

    def set_client_key(self, client_id: str, pem: str) -> None:
        self._give("key", {"client_id": client_id, "pem": pem})

    def secret_issuer(self) -> str | None:
        """The authorization server the secret or key is bound to (it goes to no other): the
        one the user named (``--auth-server``), else the one it was first sent to."""
        named = self.named_auth_server()
        if named is not None:
            return named
        for kind in ("secret", "key"):
            raw = self._read().get(kind)
            issuer = raw.get("issuer") if isinstance(raw, dict) else None
            if isinstance(issuer, str):
                return issuer
        return None

    def bind_secret(self, issuer: str) -> None:
        """Bind what the user gave (a secret, a key) to ``issuer``, unless it is bound already."""
        data = self._read()
        given = [k for k in ("secret", "key") if isinstance(data.get(k), dict) and not data[k].get("issuer")]
        for kind in given:
            data[kind]["issuer"] = issuer
        if given:
            self._write(data)

    def named_auth_server(self) -> str | None:
        """The authorization server the user named for this server's secret or key."""
        named = self._read().get("auth_server")
        return named if isinstance(named, str) and named else None

    def name_auth_server(self, issuer: str) -> None:
        """Bind what the user gave to ``issuer`` from the start (tokens and a client got
        elsewhere are dropped); no other authorization server gets it, nor is used."""
        data = self._read()
        data["auth_server"] = issuer
        for kind in ("secret", "key"):
            if isinstance(data.get(kind), dict):
                data[kind]["issuer"] = issuer
        for kind in ("client", "tokens", "server"):
            data.pop(kind, None)
        self._write(data)

    def server_metadata(self) -> OAuthMetadata | None:
        """The authorization server's metadata the tokens came from (its token endpoint
        is where they are refreshed, also in a later session, before any discovery)."""
        raw = self._read().get("server")
        try:
            return OAuthMetadata.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None

    def keep_server_metadata(self, metadata: OAuthMetadata) -> None:
        data = self._read()
        raw = metadata.model_dump(mode="json", exclude_none=True)
        if data.get("server") != raw:
            data["server"] = raw
            self._write(data)

    def identity_provider(self, client_id: str) -> dict[str, str] | None:
        """The enterprise identity provider the user gave for ``client_id`` (issuer, its
        client id there, the ID token), for cross-app access."""
        raw = self._read().get("idp")
        if isinstance(raw, dict) and raw.get("for_client") == client_id and all(
                isinstance(raw.get(k), str) for k in ("issuer", "client_id", "id_token")):
            return {k: str(raw[k]) for k in ("issuer", "client_id", "id_token")}
        return None

    def set_identity_provider(self, for_client: str, issuer: str, client_id: str, id_token: str) -> None:
        self._give("idp", {"for_client": for_client, "issuer": issuer, "client_id": client_id, "id_token": id_token})

    def set_client_secret(self, client_id: str, secret: str) -> None:
        self._give("secret", {"client_id": client_id, "client_secret": secret})


__all__ = ["TokenFile", "token_path"]
