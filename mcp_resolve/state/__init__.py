"""What a client carries between rounds, and what proves it is ours, fresh and used once.

Here: the round state (answers pinned to the questions they answered), the seal
(authenticated encryption bound to the request), the key ring and the keys a process
derives, at-most-once use and the replay guard it consults. Nothing here knows a framework
or a round's flow: the protocol layer above decides when to seal and what to carry; the
Redis-backed guard lives in `mcp_resolve.redis`. The public face is `mcp_resolve.seal`.
"""
