"""Approvals only a person can give: a passkey on the server's own page, bound to the words.

What belongs here: `Approvals` (the resolver's `require()`, the approval page, the page
where a signed-in user adds and removes passkeys, the routes a server mounts), what a
tool receives (`Approval`), and the store of the sealed records (`ApprovalStore`,
`MemoryApprovalStore`; `RedisApprovalStore` in `mcp_resolve.redis`). It stands with the
facades above `pages`, whose browser identity, sign-in (`SignIn`), links and headers
it reuses; only `ceremony` imports fido2, an optional extra (`pip install
'mcp-resolve[passkeys]'`).
docs/approvals.md states what it promises and what it does not.
"""

from .approval_store import ApprovalStore, MemoryApprovalStore, StoreFull
from .approving import ApprovalConfigError, Approvals
from .asks import Approval
from .passkeys import Passkey

__all__ = [
    "Approval",
    "ApprovalConfigError",
    "ApprovalStore",
    "Approvals",
    "MemoryApprovalStore",
    "Passkey",
    "StoreFull",
]
