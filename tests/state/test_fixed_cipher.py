"""`KeyRing.cipher(purpose)`: the same text in the same context is the same token (a page
link must not change between rounds), readable by no one without the keys, opened only in
its own context and purpose, and by every key of the ring (rotation)."""

from __future__ import annotations

from mcp_resolve.seal import KeyRing

OLD, NEW = "o" * 32, "n" * 32


def test_the_same_text_in_the_same_context_is_the_same_token() -> None:
    cipher = KeyRing(OLD).cipher("pages/question-text")
    token = cipher.seal(b"Pay 5 EUR for order 7", b"alice")
    assert token == KeyRing(OLD).cipher("pages/question-text").seal(
        b"Pay 5 EUR for order 7", b"alice"
    )
    assert token != cipher.seal(b"Pay 5 EUR for order 8", b"alice")
    assert token != cipher.seal(b"Pay 5 EUR for order 7", b"bob")
    assert b"Pay" not in token.encode()
    assert "EUR" not in token
    assert cipher.open(token, b"alice") == b"Pay 5 EUR for order 7"


def test_a_token_opens_only_in_its_context_purpose_and_ring() -> None:
    cipher = KeyRing(OLD).cipher("pages/question-text")
    token = cipher.seal(b"Pay 5 EUR", b"alice")
    assert cipher.open(token, b"bob") is None
    assert KeyRing(OLD).cipher("another purpose").open(token, b"alice") is None
    assert KeyRing(NEW).cipher("pages/question-text").open(token, b"alice") is None
    flipped = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    assert cipher.open(flipped, b"alice") is None
    assert cipher.open("not base64 !", b"alice") is None
    assert cipher.open("", b"alice") is None


def test_every_key_of_the_ring_opens_what_an_earlier_first_key_sealed() -> None:
    token = KeyRing(OLD).cipher("p").seal(b"text", b"c")
    rotated = KeyRing(NEW, OLD).cipher("p")
    assert rotated.open(token, b"c") == b"text"
    assert rotated.seal(b"text", b"c") != token  # the new first key seals
