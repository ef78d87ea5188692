"""Property tests of redaction (N9): an explicit secret or a secret environment value never
survives, redacting twice changes nothing, and opaque payloads are never touched.

Every test runs with the secret-named variables of the real environment removed, so what
it finds depends on the drawn values only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.common.secret_names import ENV_SECRET_WORDS as _SECRET_ENV_WORDS
from fuxi_notebook._internal.common.secret_names import (
    NOT_SECRET_ENV_WORDS as _NOT_SECRET_ENV_WORDS,
)
from fuxi_notebook._internal.sessions.redact import REDACTED, redact, redact_text

#: Characters redaction itself writes: the marker and the line breaks around a redacted
#: private key. A secret made of these alone can be rebuilt from the output without having
#: survived (the secret "DACT" is inside every "[REDACTED]").
WRITTEN = frozenset(REDACTED + "\n")
#: Fragments that make the credential shapes match, to mix into the surrounding text.
FRAGMENTS = ["password=", "token: ", "api_key='", '"secret": "', "Bearer 9", "https://u:",
             "@h/", "sk-ant-", "ghp_", "AKIA", "-----BEGIN RSA PRIVATE KEY-----\n",
             "-----END RSA PRIVATE KEY-----", " ", "\n", ";", "=", ":", '"', "'", REDACTED]


@contextmanager
def secret_free_environment(**extra: str) -> Iterator[None]:
    """os.environ without its secret-named variables (plus `extra`)."""
    kept = {k: v for k, v in os.environ.items()
            if not any(w in k.upper() for w in _SECRET_ENV_WORDS)}
    with mock.patch.dict(os.environ, {**kept, **extra}, clear=True):
        yield


def _secrets(min_size: int, alphabet: st.SearchStrategy[str] | None = None
             ) -> st.SearchStrategy[str]:
    chars = st.text(alphabet if alphabet is not None else st.characters(),
                    min_size=min_size, max_size=24)
    return chars.filter(lambda s: not set(s) <= WRITTEN)


def _around(secret: str) -> st.SearchStrategy[str]:
    """Text sharing no character with `secret`: whatever of it the output holds cannot
    complete a copy of the secret."""
    fragments = [f for f in FRAGMENTS if not set(f) & set(secret)]
    pieces = st.text(st.characters(exclude_characters=set(secret)), max_size=12)
    if fragments:
        pieces = st.one_of(pieces, st.sampled_from(fragments))
    return st.lists(pieces, max_size=6).map("".join)


@st.composite
def embedded(draw: st.DrawFn, secrets: st.SearchStrategy[str]) -> tuple[str, str]:
    """(secret, text holding it once to three times, anywhere)."""
    secret = draw(secrets)
    around = _around(secret)
    parts = [draw(around)]
    for _ in range(draw(st.integers(1, 3))):
        parts += [secret, draw(around)]
    return secret, "".join(parts)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(embedded(_secrets(4)))
@example(("q7#x", "the value q7#x here"))
@example(("hunter2!", 'password="hunter2!"'))
@example(("abcd", "abcdabcdabcd"))
@example(("ab[REDACTED]cd", "[REDACTED]ab[REDACTED]cd"))
@example(("ED]x", "sk-ant-" + "a" * 24 + "ED]x"))  # the secret would end a marker
@example(("x1[RED", "x1[RED" + "ACTED]"))  # ...or start one
@example(("xyz\n-", "-----BEGIN PRIVATE KEY-----\nxyz\n-"))
def test_an_explicit_secret_never_survives(case):
    secret, text = case
    with secret_free_environment():
        out = redact_text(text, secrets=[secret])
        assert secret not in out
        assert secret not in redact({"v": [text, (text,)]}, secrets=[secret])["v"][0]


# --- idempotence ----------------------------------------------------------------------------

def _json_like(leaf_text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), leaf_text),
        lambda inner: st.one_of(st.lists(inner, max_size=4),
                                st.dictionaries(st.text(max_size=8), inner, max_size=4)),
        max_leaves=12)


def _texts(extra: list[str]) -> st.SearchStrategy[str]:
    """Text made of credential fragments, `extra` pieces and anything."""
    pieces = st.sampled_from(FRAGMENTS + extra) | st.text(max_size=6)
    return st.one_of(st.text(max_size=30), st.lists(pieces, max_size=6).map("".join))


_leaf_text = _texts([])
json_like = _json_like(_leaf_text)

#: Every character redaction writes: the marker, and what closes a cut-off private key.
WRITES = frozenset(REDACTED + "\n-----END PRIVATE KEY-----")
#: Secrets for which redacting twice changes nothing: parts of the marker (kept as they
#: are inside a marker), and secrets sharing no character with what redaction writes.
#: Known counterexamples outside this (reported, not fixed): a secret that a marker written
#: in the same pass completes, e.g. "x.[RED" in "x.sk-ant-" + 24 * "a" (first pass
#: "x.[REDACTED]", second "[REDACTED]ACTED]"), "D];ab" in "password=abc;ab", and
#: "-----END" in a cut-off "-----BEGIN PRIVATE KEY-----\nabc".
_idempotent_secrets = st.one_of(
    st.integers(0, len(REDACTED) - 4).flatmap(
        lambda i: st.integers(i + 4, len(REDACTED)).map(lambda j: REDACTED[i:j])),
    st.text(st.characters(exclude_characters=WRITES), min_size=4, max_size=12))


@st.composite
def secrets_and_value(draw: st.DrawFn) -> tuple[list[str], Any]:
    secrets = draw(st.lists(_idempotent_secrets, max_size=2))
    return secrets, draw(_json_like(_texts(secrets)))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(secrets_and_value())
@example(([], "password=hunter2 token: 'abc' https://u:pw@h/"))
@example(([], "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END DSA PRIVATE KEY-----"))
@example((["hunter2!"], {"k": ["sk-ant-" + "a" * 24, "Bearer 9abcdefgh hunter2!"]}))
@example((["DACT"], "abc DACT def"))  # a secret inside the marker: the marker stays as it is
@example((["REDACTED"], "sk-ant-" + "a" * 24))
@example((["[RED", "q1w2"], ["[RED[RED", "a[REDb", "[REDACTED]q1w2"]))
def test_redacting_twice_changes_nothing(case):
    secrets, value = case
    with secret_free_environment():
        once = redact(value, secrets=secrets)
        assert redact(once, secrets=secrets) == once


@settings(max_examples=100, deadline=None, derandomize=True)
@given(json_like)
@example("my token REDACTED, in a marker: [REDACTED]")
def test_a_secret_environment_value_that_is_the_marker_does_not_grow_it(value):
    """A placeholder such as API_KEY=REDACTED: every record is redacted again when it is
    saved again; the marker must not grow each time ("[[REDACTED]]")."""
    with secret_free_environment(FUXI_TEST_API_KEY="REDACTED"):
        once = redact(value)
        assert redact(once) == once
        assert "[[REDACTED]]" not in str(once)


# --- opaque payloads --------------------------------------------------------------------------

_payload = st.one_of(st.text(max_size=40), st.sampled_from(
    ["sk-ant-" + "a" * 30, "password=hunter2", "AKIAIOSFODNN7EXAMPLE", REDACTED]))


@st.composite
def opaque_block(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["base64", "thinking", "redacted_thinking"]))
    key = "signature" if kind == "thinking" else "data"
    block: dict[str, Any] = {"type": kind, key: draw(_payload)}
    if kind == "base64":
        block["media_type"] = "image/png"
        return {"type": "image", "source": block}
    if kind == "thinking":
        block["thinking"] = draw(_payload)
    return block


_OPAQUE = {"base64": "data", "thinking": "signature", "redacted_thinking": "data"}


def _opaque_pairs(before: Any, after: Any) -> Iterator[tuple[Any, Any]]:
    """(payload in `before`, what stands at its place in `after`), walking both together;
    what is opaque is read from `before` (a secret may be the very word "thinking")."""
    if isinstance(before, dict):
        assert isinstance(after, dict) and list(after) == list(before)
        kind = before.get("type")
        key = _OPAQUE.get(kind) if isinstance(kind, str) else None
        for k, v in before.items():
            if k == key:
                yield v, after[k]
            else:
                yield from _opaque_pairs(v, after[k])
    elif isinstance(before, (list, tuple)):
        assert type(after) is type(before) and len(after) == len(before)
        for b, a in zip(before, after, strict=True):
            yield from _opaque_pairs(b, a)


with_blocks = st.recursive(
    st.one_of(_leaf_text, opaque_block()),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(with_blocks, st.lists(_secrets(4), max_size=2))
@example({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                      "data": "password=hunter2"}}, ["hunter2"])
@example([{"type": "thinking", "thinking": "sk-ant-" + "a" * 30,
           "signature": "sk-ant-" + "a" * 30}], [])
@example({"type": "redacted_thinking", "data": "AKIAIOSFODNN7EXAMPLE"}, ["AKIA"])
@example({"type": "thinking", "thinking": "x", "signature": "thinking"}, ["thinking"])
def test_opaque_payloads_are_never_changed(value, secrets):
    with secret_free_environment():
        out = redact(value, secrets=secrets)
    pairs = list(_opaque_pairs(value, out))
    assert all(a is b for b, a in pairs), pairs


# --- secret environment values ----------------------------------------------------------------

_env_names = st.tuples(st.from_regex(r"[A-Za-z_]{0,6}", fullmatch=True),
                       st.sampled_from(_SECRET_ENV_WORDS).flatmap(  # any case: my_api_key
                           lambda w: st.sampled_from([w, w.lower(), w.capitalize()])),
                       st.from_regex(r"[A-Za-z0-9_]{0,6}", fullmatch=True)).map("".join).filter(
    lambda n: not any(w in n.upper() for w in _NOT_SECRET_ENV_WORDS))
#: what an environment variable can hold: no NUL, no lone surrogate
_env_chars = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


def _strings(value: Any) -> Iterator[str]:
    """Every string of `value` except dict keys."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


@st.composite
def env_case(draw: st.DrawFn) -> tuple[str, str, Any]:
    """(name, value, a JSON-like value whose strings hold the value)."""
    name = draw(_env_names)
    secret, text = draw(embedded(_secrets(8, _env_chars)))
    shape = draw(st.sampled_from(["str", "list", "dict", "nested"]))
    value: Any = {"str": text, "list": [text, "x", text], "dict": {"out": text},
                  "nested": {"content": [{"type": "text", "text": text}], "input": (text,)}}[shape]
    return name, secret, value


@settings(max_examples=300, deadline=None, derandomize=True)
@given(env_case())
@example(("FUXI_TEST_TOKEN", "a1b2c3d4", "the value a1b2c3d4 here"))
@example(("my_api_key", "q1w2e3r4t5", {"out": ["the value q1w2e3r4t5 here"]}))
@example(("DB_PASSWD", "hunter2!hunter2!", {"out": ["password=hunter2!hunter2!"]}))
@example(("DB_PASSWD", "é ü 中文 ok", ["é ü 中文 ok", "x"]))
@example(("AUTH", "sk-ant-" + "b" * 24, "sk-ant-" + "b" * 24 + "xyz"))
def test_a_secret_environment_value_never_survives(case):
    name, secret, value = case
    with secret_free_environment(**{name: secret}):
        out = redact(value)
    assert not [s for s in _strings(out) if secret in s]


def _every_pattern(text: str) -> str:
    """Redaction without the needles (every shape and the pairs tried on every text): what
    the needles must never change."""
    import importlib

    module = importlib.import_module("fuxi_notebook._internal.sessions.redact")

    for pattern, replacement, _ in module._SHAPES:
        text = pattern.sub(replacement, text)
    return module._PAIR.sub(module._redact_pair, text)


_SHAPED = st.lists(st.one_of(st.sampled_from([*FRAGMENTS, "Key=", "PASSWD: ", "eyJabcde.",
                                              "xoxb-", "github_pat_", "GH", "_", "SK-"]),
                             st.text(st.sampled_from("aZ09_-./:@ \n"), max_size=30)),
                   max_size=8).map("".join)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_SHAPED)
@example("https://user:pass@host/")
@example("Authorization: Bearer abc12345def")
@example("ghp_" + "a" * 36)
@example("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----")
@example("eyJabcdef.eyJabcdef.sig")
@example("API-KEY: hunter2hunter2")
def test_the_needles_never_skip_a_credential(text):
    """Each shape is tried only on text holding its needles (so outputs without any pass
    fast); that must find exactly what trying every shape finds."""
    with secret_free_environment():
        assert redact_text(text) == _every_pattern(text)
