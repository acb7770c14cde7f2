"""Sealed requestState: round trips, rotation, and one uniform refusal for every bad token."""

from __future__ import annotations

import base64
import datetime
import json
import logging
import pickle
import types
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_resolve.seal import (
    FUTURE_SKEW,
    MESSAGE,
    PREFIX,
    Binding,
    InvalidState,
    KeyRing,
    MemoryReplayGuard,
    StateSealer,
    arguments_digest,
)
from mcp_resolve.state import keys

T0 = 1_800_000_000.0
OLD = b"o" * 32
NEW = "n" * 40
BINDING = Binding.of("tools/call", "transfer", {"amount": 10, "to": "bob"}, principal="alice")


class Clock:
    """A settable clock, so expiry is tested without sleeping."""

    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def sealer(*keys: bytes | str, clock: Clock | None = None, **options: Any) -> StateSealer:
    return StateSealer(KeyRing(*keys), now=clock or Clock(), **options)


def raw_of(token: str) -> bytes:
    body = token[len(PREFIX) :]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def token_of(raw: bytes) -> str:
    return PREFIX + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def refused(s: StateSealer, token: Any, binding: Binding = BINDING) -> InvalidState:
    with pytest.raises(InvalidState) as info:
        s.unseal(token, binding=binding)
    exc = info.value
    assert str(exc) == MESSAGE
    assert exc.args == (MESSAGE,)
    assert exc.__cause__ is None
    assert exc.__suppress_context__
    return exc


# -- round trip ------------------------------------------------------------------------


def test_a_sealed_state_unseals_to_the_same_payload() -> None:
    s = sealer(NEW)
    payload = '{"v":1,"n":2,"a":{"k":["d","accept",{"x":"é"}]},"q":{}}'
    assert s.unseal(s.seal(payload, binding=BINDING), binding=BINDING) == payload


def test_payloads_with_any_text_including_lone_surrogates_survive_the_round_trip() -> None:
    s = sealer(NEW)
    for payload in ["", "\ud800", "日本語 \x00 \U0001f600", "x" * 10_000]:
        assert s.unseal(s.seal(payload, binding=BINDING), binding=BINDING) == payload


def test_the_token_is_encrypted_so_the_payload_is_not_in_it_in_clear() -> None:
    s = sealer(NEW)
    payload = "SECRET-ANSWER-4242"
    token = s.seal(payload, binding=BINDING)
    assert token.startswith(PREFIX)
    assert payload not in token
    assert payload.encode() not in raw_of(token)
    assert b"alice" not in raw_of(token)
    assert b"transfer" not in raw_of(token)
    assert s.seal(payload, binding=BINDING) != token  # a fresh nonce every time


def test_a_token_is_prefix_and_unpadded_base64url_of_key_id_nonce_and_ciphertext() -> None:
    ring = KeyRing(NEW)
    token = StateSealer(ring, now=Clock()).seal("p", binding=BINDING)
    body = token[len(PREFIX) :]
    assert "=" not in body
    assert set(body) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    raw = raw_of(token)
    assert raw[:4].hex() == ring.key_ids[0]
    assert len(raw) > 4 + 12 + 16


# -- rotation --------------------------------------------------------------------------


def test_rotation_phase_one_a_new_first_key_seals_while_the_old_key_still_unseals() -> None:
    clock = Clock()
    old_token = sealer(OLD, clock=clock).seal("old", binding=BINDING)
    rotating = sealer(NEW, OLD, clock=clock)
    assert rotating.unseal(old_token, binding=BINDING) == "old"
    new_token = rotating.seal("new", binding=BINDING)
    assert raw_of(new_token)[:4].hex() == KeyRing(NEW).key_ids[0]
    assert sealer(NEW, clock=clock).unseal(new_token, binding=BINDING) == "new"


def test_rotation_phase_two_a_ring_without_the_old_key_refuses_its_tokens() -> None:
    old_token = sealer(OLD).seal("old", binding=BINDING)
    assert refused(sealer(NEW), old_token).reason == "unknown_key"


def test_rotation_rollback_a_ring_of_only_the_old_key_refuses_tokens_of_the_new_one() -> None:
    new_token = sealer(NEW, OLD).seal("new", binding=BINDING)
    assert refused(sealer(OLD), new_token).reason == "unknown_key"


def test_the_same_secret_as_bytes_or_str_gives_the_same_key() -> None:
    assert (
        KeyRing(NEW).key_ids
        == KeyRing(NEW.encode()).key_ids
        == KeyRing(bytearray(NEW, "utf-8")).key_ids
    )
    token = sealer(NEW).seal("p", binding=BINDING)
    assert sealer(NEW.encode()).unseal(token, binding=BINDING) == "p"


# -- every refusal looks the same ------------------------------------------------------


def test_each_failure_mode_gives_the_uniform_message_and_its_own_logged_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = sealer(NEW)
    good = s.seal("payload", binding=BINDING)
    raw = raw_of(good)
    flipped = bytearray(raw)
    flipped[-1] ^= 1
    cases = {
        "oversized": (PREFIX + "A" * 70_000, "oversized"),
        "not a string": (b"mrs1.AAAA", "malformed"),
        "no prefix": (good[len(PREFIX) :], "malformed"),
        "other version": ("mrs2." + good[len(PREFIX) :], "malformed"),
        "bad base64": (good[:20] + "*" + good[21:], "malformed"),
        "padding": (good + "=", "malformed"),
        "impossible length": (good + "A" * (4 - len(good[len(PREFIX) :]) % 4 + 1), "malformed"),
        "truncated": (token_of(raw[:31]), "malformed"),
        "empty body": (PREFIX, "malformed"),
        "unknown key id": (token_of(b"\0\0\0\0" + raw[4:]), "unknown_key"),
        "tampered": (token_of(bytes(flipped)), "tampered"),
        "other key's ciphertext": (
            token_of(raw[:4] + raw_of(sealer(OLD).seal("payload", binding=BINDING))[4:]),
            "tampered",
        ),
    }
    for name, (token, reason) in cases.items():
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="mcp_resolve.seal"):
            exc = refused(s, token)
        assert exc.reason == reason, name
        assert [r.name for r in caplog.records] == ["mcp_resolve.seal"], name
        assert caplog.records[0].levelno == logging.WARNING
        assert reason in caplog.records[0].getMessage()
        assert reason not in str(exc)


def test_a_non_canonical_base64_spelling_of_a_valid_token_is_refused() -> None:
    s = sealer(NEW)
    token = s.seal("p", binding=BINDING)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    if len(token[len(PREFIX) :]) % 4 == 0:
        token = s.seal("pp", binding=BINDING)  # need unused trailing bits in the last char
    last = alphabet.index(token[-1])
    twin = token[:-1] + alphabet[last ^ 1]
    assert raw_of(twin) == raw_of(token)
    assert refused(s, twin).reason == "malformed"


@pytest.mark.parametrize(
    "envelope",
    [
        b"not json",
        b"[1,2]",
        b'{"v":2,"iat":0,"exp":1,"m":"","t":"","a":"","j":"","s":""}',
        b'{"v":true,"iat":0,"exp":1,"m":"","t":"","a":"","j":"","s":""}',
        b'{"v":1,"iat":"0","exp":1,"m":"","t":"","a":"","j":"","s":""}',
        b'{"v":1,"iat":0,"exp":NaN,"m":"","t":"","a":"","j":"","s":""}',
        b'{"v":1,"iat":0,"exp":1' + b"0" * 400 + b',"m":"","t":"","a":"","j":"","s":""}',
        b'{"v":1,"iat":0,"exp":1,"m":"","t":"","a":"","j":"","s":3}',
        b'{"v":1,"iat":0,"exp":1,"m":"","t":"","a":"","j":"","s":"","p":null}',
        b'{"v":1,"iat":0,"exp":1,"t":"","a":"","j":"","s":""}',
        b"[" * 20_000 + b"]" * 20_000,
    ],
)
def test_an_authentic_but_malformed_envelope_is_refused_as_malformed(envelope: bytes) -> None:
    s = sealer(NEW, clock=Clock(0.5))
    assert refused(s, s._encrypt(envelope)).reason == "malformed"


def test_the_refusal_pickles_with_its_reason() -> None:
    exc = pickle.loads(pickle.dumps(InvalidState("expired", "past expiry")))
    assert (str(exc), exc.reason, exc.detail) == (MESSAGE, "expired", "past expiry")


# -- time ------------------------------------------------------------------------------


def test_a_token_is_accepted_until_its_ttl_and_refused_from_then_on() -> None:
    clock = Clock()
    s = sealer(NEW, clock=clock, ttl=30)
    token = s.seal("p", binding=BINDING)
    clock.t = T0 + 29.999
    assert s.unseal(token, binding=BINDING) == "p"
    clock.t = T0 + 30
    assert refused(s, token).reason == "expired"


def test_the_default_ttl_is_ten_minutes() -> None:
    clock = Clock()
    s = sealer(NEW, clock=clock)
    token = s.seal("p", binding=BINDING)
    clock.t = T0 + 599
    assert s.unseal(token, binding=BINDING) == "p"
    clock.t = T0 + 600
    assert refused(s, token).reason == "expired"


def test_lowering_the_ttl_also_shortens_tokens_already_issued() -> None:
    clock = Clock()
    token = sealer(NEW, clock=clock, ttl=600).seal("p", binding=BINDING)
    clock.t = T0 + 61
    assert refused(sealer(NEW, clock=clock, ttl=60), token).reason == "expired"


def test_a_token_issued_within_the_clock_skew_is_accepted_and_beyond_it_refused() -> None:
    clock = Clock()
    s = sealer(NEW, clock=clock)
    within = sealer(NEW, clock=Clock(T0 + FUTURE_SKEW)).seal("p", binding=BINDING)
    beyond = sealer(NEW, clock=Clock(T0 + FUTURE_SKEW + 1)).seal("p", binding=BINDING)
    assert s.unseal(within, binding=BINDING) == "p"
    assert refused(s, beyond).reason == "not_yet_valid"


# -- binding ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sealed_for", "opened_for"),
    [
        (BINDING, replace(BINDING, method="prompts/get")),
        (BINDING, replace(BINDING, tool="delete_account")),
        (BINDING, Binding.of("tools/call", "transfer", {"amount": 10_000, "to": "bob"}, "alice")),
        (BINDING, replace(BINDING, principal="mallory")),
        (BINDING, replace(BINDING, principal=None)),
        (replace(BINDING, principal=None), BINDING),
        (replace(BINDING, principal=""), replace(BINDING, principal=None)),
    ],
)
def test_a_token_replayed_on_another_request_or_principal_is_refused(
    sealed_for: Binding, opened_for: Binding
) -> None:
    s = sealer(NEW)
    token = s.seal("p", binding=sealed_for)
    assert s.unseal(token, binding=sealed_for) == "p"
    assert refused(s, token, opened_for).reason == "binding"


def test_a_token_for_one_audience_is_refused_by_a_server_with_the_same_keys_and_another() -> None:
    token = sealer(NEW, audience="billing").seal("p", binding=BINDING)
    assert sealer(NEW, audience="billing").unseal(token, binding=BINDING) == "p"
    assert refused(sealer(NEW, audience="search"), token).reason == "binding"
    assert refused(sealer(NEW), token).reason == "binding"


def test_the_arguments_digest_ignores_key_order_and_nothing_else() -> None:
    a = arguments_digest({"b": [1, 2], "a": {"y": 1, "x": 2}})
    assert a == arguments_digest({"a": {"x": 2, "y": 1}, "b": [1, 2]})
    assert a == arguments_digest(types.MappingProxyType({"a": {"x": 2, "y": 1}, "b": [1, 2]}))
    assert a != arguments_digest({"b": [2, 1], "a": {"y": 1, "x": 2}})
    assert a != arguments_digest({"b": [1, 2], "a": {"y": 1, "x": "2"}})
    assert len(a) == 22
    assert set(a) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_the_arguments_digest_refuses_values_json_cannot_hold() -> None:
    # Digested by str(), a SecretStr or a model hiding a field would bind a state to other
    # values as well: the digest is of the arguments as they came over the wire.
    with pytest.raises(TypeError, match="not JSON serializable"):
        arguments_digest({"d": datetime.date(2026, 7, 28)})
    assert arguments_digest({"s": "\ud800"}) != arguments_digest({"s": "\ud801"})


# -- hostile input ---------------------------------------------------------------------

FUZZ = sealer(NEW, OLD)
VALID = FUZZ.seal("the payload", binding=BINDING)
NEW_KID = raw_of(VALID)[:4]


@given(st.text(max_size=300))
def test_random_text_never_unseals(text: str) -> None:
    with pytest.raises(InvalidState, match=f"^{MESSAGE}$"):
        FUZZ.unseal(text, binding=BINDING)
    with pytest.raises(InvalidState, match=f"^{MESSAGE}$"):
        FUZZ.unseal(PREFIX + text, binding=BINDING)


@given(st.binary(max_size=300), st.booleans())
def test_random_bytes_behind_the_prefix_never_unseal(data: bytes, known_key: bool) -> None:
    token = token_of(NEW_KID + data if known_key else data)
    with pytest.raises(InvalidState) as info:
        FUZZ.unseal(token, binding=BINDING)
    assert info.value.reason in {"malformed", "unknown_key", "tampered"}
    with pytest.raises(InvalidState):
        FUZZ.unseal(data.decode("latin-1"), binding=BINDING)


@settings(max_examples=300)
@given(st.data())
def test_any_bit_flip_truncation_or_extension_of_a_valid_token_never_unseals(
    data: st.DataObject,
) -> None:
    kind = data.draw(st.sampled_from(["text bit", "byte bit", "truncate", "extend"]))
    if kind == "text bit":
        i = data.draw(st.integers(0, len(VALID) - 1))
        bit = data.draw(st.integers(0, 15))
        mutated = VALID[:i] + chr(ord(VALID[i]) ^ (1 << bit)) + VALID[i + 1 :]
    elif kind == "byte bit":
        raw = bytearray(raw_of(VALID))
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] ^= 1 << data.draw(st.integers(0, 7))
        mutated = token_of(bytes(raw))
    elif kind == "truncate":
        mutated = VALID[: data.draw(st.integers(0, len(VALID) - 1))]
    else:
        mutated = VALID + data.draw(st.text(min_size=1, max_size=50))
    assert mutated != VALID
    with pytest.raises(InvalidState, match=f"^{MESSAGE}$"):
        FUZZ.unseal(mutated, binding=BINDING)


@given(st.text(max_size=2000))
def test_every_payload_round_trips(payload: str) -> None:
    assert FUZZ.unseal(FUZZ.seal(payload, binding=BINDING), binding=BINDING) == payload


def test_a_token_longer_than_the_cap_is_refused_before_it_is_decoded() -> None:
    s = sealer(NEW, max_token_length=100)
    assert refused(s, PREFIX + "A" * 95).reason == "unknown_key"
    assert refused(s, PREFIX + "A" * 96).reason == "oversized"


def test_sealing_a_state_too_long_for_the_cap_fails_at_once() -> None:
    with pytest.raises(ValueError, match="max_token_length"):
        sealer(NEW, max_token_length=200).seal("x" * 200, binding=BINDING)


def test_sealing_refuses_a_payload_or_binding_of_the_wrong_type() -> None:
    s = sealer(NEW)
    with pytest.raises(TypeError, match="payload must be str"):
        s.seal(b"bytes", binding=BINDING)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="binding must be a Binding"):
        s.seal("p", binding=("tools/call", "transfer"))  # type: ignore[arg-type]


# -- keys ------------------------------------------------------------------------------


def test_a_key_shorter_than_32_bytes_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError, match=r"key #2 is 31 bytes") as info:
        KeyRing(NEW, "s" * 31)
    assert "sss" not in str(info.value)
    with pytest.raises(ValueError, match="key #1 is 16 bytes"):
        KeyRing("é" * 8)  # 8 characters, 16 bytes of UTF-8
    KeyRing(b"\0" * 32)


def test_a_key_of_the_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="key #1 must be bytes or str, not int"):
        KeyRing(12345)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"KeyRing\(\*keys\)"):
        KeyRing([NEW, OLD])  # type: ignore[arg-type]


def test_an_empty_ring_and_a_repeated_key_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        KeyRing()
    with pytest.raises(ValueError, match="key #3 is the same as key #1"):
        KeyRing(NEW, OLD, NEW.encode())


def test_two_keys_whose_ids_collide_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "_key_id", lambda derived: b"\0\0\0\0")
    with pytest.raises(ValueError, match="share a key id"):
        KeyRing(NEW, OLD)


def test_the_ring_shows_key_ids_and_never_its_secrets() -> None:
    ring = KeyRing(NEW, OLD)
    assert len(ring.key_ids) == 2
    assert all(len(kid) == 8 for kid in ring.key_ids)
    assert repr(ring) == f"KeyRing(key_ids={list(ring.key_ids)!r})"
    assert "nnnn" not in repr(ring)
    assert not any(NEW.encode() in repr(v).encode() for v in vars(ring).values())


def test_generated_rings_are_random_and_work() -> None:
    a, b = KeyRing.generate(), KeyRing.generate()
    assert a.key_ids != b.key_ids
    token = StateSealer(a).seal("p", binding=BINDING)
    assert StateSealer(a).unseal(token, binding=BINDING) == "p"
    assert refused(StateSealer(b), token).reason == "unknown_key"


def test_keys_from_the_environment_are_raw_text_sealing_key_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_RESOLVE_STATE_KEYS", f" {NEW} , {OLD.decode()}\n")
    ring = KeyRing.from_env()
    assert ring.key_ids == KeyRing(NEW, OLD).key_ids
    monkeypatch.setenv("OTHER_KEYS", NEW)
    assert KeyRing.from_env("OTHER_KEYS").key_ids == KeyRing(NEW).key_ids


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "MCP_RESOLVE_STATE_KEYS is not set or is empty"),
        ("  ", "MCP_RESOLVE_STATE_KEYS is not set or is empty"),
        (f"{NEW},,{OLD.decode()}", "empty entry"),
        (f"{NEW},", "empty entry"),
        (f"{NEW},short", "MCP_RESOLVE_STATE_KEYS: key #2 is 5 bytes"),
        (f"{NEW},{NEW}", "MCP_RESOLVE_STATE_KEYS: key #2 is the same as key #1"),
    ],
)
def test_bad_keys_in_the_environment_are_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, value: str | None, message: str
) -> None:
    if value is None:
        monkeypatch.delenv("MCP_RESOLVE_STATE_KEYS", raising=False)
    else:
        monkeypatch.setenv("MCP_RESOLVE_STATE_KEYS", value)
    with pytest.raises(ValueError, match=message) as info:
        KeyRing.from_env()
    assert NEW not in str(info.value)


@pytest.mark.parametrize(
    "options",
    [{"ttl": 0}, {"ttl": -1}, {"ttl": float("inf")}, {"ttl": True}, {"max_token_length": 0}],
)
def test_sealer_options_out_of_range_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be"):
        sealer(NEW, **options)


def test_a_sealer_needs_a_key_ring() -> None:
    with pytest.raises(TypeError, match="must be a KeyRing"):
        StateSealer(NEW)  # type: ignore[arg-type]


# -- at most once ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_with_a_replay_guard_a_token_unseals_once_and_is_refused_after() -> None:
    clock = Clock()
    guard = MemoryReplayGuard(now=clock)
    s = sealer(NEW, clock=clock, replay_guard=guard)
    first, second = s.seal("1", binding=BINDING), s.seal("2", binding=BINDING)
    assert await s.unseal_once(first, binding=BINDING) == "1"
    with pytest.raises(InvalidState, match=f"^{MESSAGE}$") as info:
        await s.unseal_once(first, binding=BINDING)
    assert info.value.reason == "replayed"
    assert await s.unseal_once(second, binding=BINDING) == "2"
    assert s.unseal(first, binding=BINDING) == "1"  # plain unseal does not consult the guard


@pytest.mark.anyio
async def test_an_invalid_token_does_not_use_up_a_place_in_the_replay_guard() -> None:
    guard = MemoryReplayGuard()
    s = sealer(NEW, replay_guard=guard)
    token = s.seal("p", binding=BINDING)
    with pytest.raises(InvalidState) as info:
        await s.unseal_once(token, binding=replace(BINDING, tool="other"))
    assert info.value.reason == "binding"
    assert guard.entries == 0
    assert await s.unseal_once(token, binding=BINDING) == "p"


@pytest.mark.anyio
async def test_the_replay_guard_forgets_a_token_id_once_it_has_expired() -> None:
    clock = Clock()
    guard = MemoryReplayGuard(now=clock)
    s = sealer(NEW, clock=clock, ttl=30, replay_guard=guard)
    await s.unseal_once(s.seal("a", binding=BINDING), binding=BINDING)
    assert guard.entries == 1
    clock.t = T0 + 30 + FUTURE_SKEW
    await s.unseal_once(s.seal("b", binding=BINDING), binding=BINDING)
    assert guard.entries == 1  # "a" was dropped, "b" remembered


@pytest.mark.anyio
async def test_a_full_replay_guard_refuses_until_entries_expire(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    guard = MemoryReplayGuard(2, now=clock)
    assert await guard.claim("a", T0 + 10)
    assert await guard.claim("b", T0 + 20)
    with caplog.at_level(logging.WARNING, logger="mcp_resolve.seal"):
        assert not await guard.claim("c", T0 + 30)
    assert "full" in caplog.text
    assert not await guard.claim("a", T0 + 10)
    clock.t = T0 + 10
    assert await guard.claim("c", T0 + 30)
    assert guard.entries == 2


@pytest.mark.anyio
async def test_unseal_once_without_a_replay_guard_is_a_configuration_error() -> None:
    s = sealer(NEW)
    with pytest.raises(RuntimeError, match="replay_guard"):
        await s.unseal_once(s.seal("p", binding=BINDING), binding=BINDING)


def test_a_replay_guard_needs_room_for_one_entry() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        MemoryReplayGuard(0)


def test_the_sealed_envelope_holds_times_binding_token_id_and_payload() -> None:
    s = sealer(NEW, audience="srv", ttl=42)
    ring = s._keys
    token = s.seal("p", binding=BINDING)
    raw = raw_of(token)
    kid, aead = ring._keys[0]
    body = json.loads(aead.decrypt(raw[4:16], raw[16:], PREFIX.encode() + kid))
    assert body["v"] == 1
    assert (body["iat"], body["exp"]) == (T0, T0 + 42)
    assert (body["m"], body["t"], body["a"]) == ("tools/call", "transfer", BINDING.arguments_digest)
    assert body["p"] != "alice"
    assert body["aud"] == "srv"
    assert len(body["j"]) == 22
    assert body["s"] == "p"
