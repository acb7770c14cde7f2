"""The idempotency key a resolver hands to an outside API, so that a repeat does nothing there.

`Resolve(fn, once=True)` records a resolver's value, and a recorded value is never
computed again. What it cannot cover is the moment between the effect (the card charged)
and the record reaching somewhere durable (the round's response, the task's state): a
worker that dies there leaves no record, and the resolver runs again. An API that honours
an idempotency key (Stripe's `Idempotency-Key`, most payment, mail and queue services)
turns that repeat into the first call's answer, if the key is the same both times. So the
key is derived from the call's identity and the resolver's question key: the same on every
round, leg, retry and worker of one call, and different for every other call and every
other resolver of the same call.
"""

from __future__ import annotations


class IdempotencyKey(str):
    """Annotate a resolver parameter with this to receive the call's key for that resolver.

    A string (URL-safe base64, 24 characters), so it goes straight into a header:

        async def charge(amount: int, key: IdempotencyKey) -> Receipt:
            return await payments.charge(amount, idempotency_key=key)

    Stable for one call of the tool: on 2026-07-28 the identity is made by the call's first
    round and carried, sealed, in its request state; in a background task it is the task's;
    on a legacy connection, where a call runs in one process, it is made when the call
    starts. Taken by per-call resolvers only (an app- or user-scoped value belongs to no
    call); meant for `Resolve(fn, once=True)` resolvers, whose docs say what is guaranteed.
    """

    __slots__ = ()


__all__ = ["IdempotencyKey"]
