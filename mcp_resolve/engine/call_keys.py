"""The identity of one call, and the idempotency key each resolver of it receives.

A call's identity is an opaque random string. Where it comes from is the host's business
(a 2026-07-28 call's first round makes it and the sealed request state carries it; a
background task has its task id); the engine only derives keys from it, and makes one of
its own for a call that runs in one process. A key is a digest of the identity and the
resolver's question key, so it is the same for one resolver on every round and worker of a
call, different for every other resolver and call, and shows nothing of the identity (an
outside API that logs one resolver's key learns nothing of another's).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterable
from typing import Any

from ..analysis.nodes import Node
from ..idempotency import IdempotencyKey

_LABEL = b"mcp_resolve/idempotency-key/v1\0"


def new_call_id() -> str:
    """A fresh identity: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def idempotency_key(call_id: str, resolver_key: str) -> IdempotencyKey:
    """The key of the resolver with question key `resolver_key` in call `call_id`."""
    material = _LABEL + call_id.encode("utf-8", "surrogatepass") + b"\0"
    digest = hashlib.sha256(material + resolver_key.encode("utf-8", "surrogatepass")).digest()
    return IdempotencyKey(base64.urlsafe_b64encode(digest[:18]).decode("ascii"))


def keys_of(call_id: str, nodes: Iterable[Node]) -> dict[int, IdempotencyKey]:
    """The keys of the resolvers among `nodes` that take one, by node index."""
    return {node.index: idempotency_key(call_id, node.key) for node in nodes if node.key_params}


def identify(res: Any, call_id: str) -> None:
    """Name the call a resolution (`res`) runs: its resolvers' keys derive from `call_id`.
    Given before the call starts; a call never named gets a fresh one when a key is taken."""
    res.call_id = call_id
    res._keys = keys_of(call_id, res._graph.nodes)
