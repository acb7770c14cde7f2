"""The demo's payment provider: a payment the user makes a second after opening its page,
reported to the example server's webhook, signed with the secret the two share."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import urllib.request
from typing import Any

PAYING = 1.0  # seconds the user takes to pay


def pay_soon(webhook: str, secret: str, event: dict[str, Any]) -> threading.Thread:
    """Report `event` to `webhook` a moment from now, from a thread (joined to settle)."""
    payment = threading.Timer(PAYING, report, (webhook, secret, event))
    payment.start()
    return payment


def report(webhook: str, secret: str, event: dict[str, Any]) -> None:
    body = json.dumps(event).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        webhook, data=body, headers={"X-Signature": signature}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        print(f"    (the payment provider reports it: webhook answered {response.status})")
