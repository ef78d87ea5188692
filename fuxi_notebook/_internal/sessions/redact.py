"""Secret redaction for everything a session record stores (N9).

A record ends up in a notebook that gets committed, shared and rendered on GitHub, so any
string that reaches it goes through `redact` first. Three sources of secrets are replaced by
`[REDACTED]`: strings the caller names explicitly, the values of environment variables whose
name says they are secret, and text that looks like a credential (API keys, tokens, private
key blocks, `password=...` pairs). The output depends only on the input and the environment,
never on chance, so the same run always produces the same record (nbval compares it exactly).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from ..common.reading import environment
from ..common.secret_names import is_secret_env_name

__all__ = ["REDACTED", "redact", "redact_text", "redacted_chunk", "unfinished_secret"]

REDACTED = "[REDACTED]"

_MIN_ENV_VALUE = 8
#: Shorter explicit secrets are ignored: replacing "ab" everywhere protects nothing and
#: would destroy the record.
_MIN_EXPLICIT = 4

_TOKEN_CHARS = r"A-Za-z0-9._~+/=\-"

#: (pattern, replacement, needles) for credentials recognisable by their shape alone. Each
#: pattern matches only text that holds all its needles (lower-cased): a cheap `in` test
#: spares the regular expression most outputs (the kernel's every output passes here).
_SHAPES: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)",
                re.DOTALL),
     rf"-----BEGIN \1PRIVATE KEY-----\n{REDACTED}\n-----END \1PRIVATE KEY-----",
     ("private key-----",)),
    (re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_\-]{20,}"), REDACTED, ("sk-ant-",)),
    (re.compile(r"(?<![\w-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"), REDACTED,
     ("sk-",)),
    (re.compile(r"(?<![\w-])sk-[A-Za-z0-9]{20,}"), REDACTED, ("sk-",)),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED, ("akia",)),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), REDACTED, ("gh", "_")),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), REDACTED, ("github_pat_",)),
    (re.compile(r"\bxox[baprs]-[A-Za-z0-9\-]{10,}"), REDACTED, ("xox",)),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"), REDACTED,
     ("eyj",)),
    # A token after "Bearer" must contain a digit, so "Bearer authentication" stays prose.
    (re.compile(rf"(?i)\b(bearer\s+)(?=[{_TOKEN_CHARS}]*\d)[{_TOKEN_CHARS}]{{8,}}"),
     rf"\1{REDACTED}", ("bearer",)),
    (re.compile(r"(?<=://)([^/\s:@]+):([^/\s@]+)@"), rf"\1:{REDACTED}@", ("://", "@")),
)

_SECRET_KEY = (r"[A-Za-z0-9_.\-]*(?:api[_\-]?key|access[_\-]?key|secret[_\-]?key"
               r"|private[_\-]?key|secret|password|passwd|token)")
#: `key=value`, `key: value`, `"key": "value"` where the key names a secret.
_PAIR = re.compile(
    rf"(?i)(?<![\w.\-])(?P<q>[\"']?)(?P<key>{_SECRET_KEY})(?![\w\-])(?P=q)"
    r"[ \t]*(?P<op>[:=])[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'"
    r"|(?P<uv>[^\s\"'`,;&(){}\[\]<>=:][^\s\"'`,;&(){}\[\]<>]*))"
)
#: Every secret-naming key of `_PAIR` holds one of these (lower-cased).
_PAIR_NEEDLES = ("key", "secret", "passw", "token")
_KEY_ONLY = re.compile(rf"(?i){_SECRET_KEY}")


def _fewest(needles: set[str]) -> tuple[str, ...]:
    """The needles not containing another (text holding none of these holds none)."""
    return tuple(sorted(n for n in needles if not any(o != n and o in n for o in needles)))


#: One needle of every shape and pair pattern: lower-cased text without any of them holds
#: no credential shape (most strings a record holds: ids, times, prose), which a few `in`
#: tests tell (one regular expression of them all took ten times as long)
_ANY_NEEDLE = _fewest({needles[0] for _, _, needles in _SHAPES} | set(_PAIR_NEEDLES))
_CODE_LITERALS = frozenset({"none", "null", "nil", "true", "false", "undefined"})


def redact(value: Any, *, secrets: Iterable[str] = ()) -> Any:
    """A copy of `value` with every secret in its strings replaced by `[REDACTED]`.

    Dicts, lists and tuples are copied and walked (dict keys are kept as they are); other
    values are returned unchanged. Opaque payloads are left alone: base64 `data` of
    image/document sources, and the `signature` of thinking blocks (redacting them would
    only corrupt them, they are not readable text).
    """
    literals = _literal_secrets(tuple(secrets))
    return _walk(value, lambda text: _redact_text(text, literals))


def redact_text(text: str, *, secrets: Iterable[str] = ()) -> str:
    """`redact` for a single string."""
    return _redact_text(text, _literal_secrets(tuple(secrets)))


def _walk(value: Any, fix: Callable[[str], str]) -> Any:
    """Apply `fix` to every string in a JSON-like structure, skipping opaque payloads."""
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        opaque = _opaque_keys(value)
        return {k: (v if k in opaque else _walk(v, fix)) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, fix) for v in value]
    if isinstance(value, tuple):
        return tuple(_walk(v, fix) for v in value)
    return value


def _opaque_keys(block: dict[Any, Any]) -> frozenset[str]:
    """Keys of `block` that carry binary or signed data rather than text."""
    kind = block.get("type")
    if kind == "base64":
        return frozenset({"data"})
    if kind == "thinking":
        return frozenset({"signature"})
    if kind == "redacted_thinking":
        return frozenset({"data"})
    return frozenset()


def _redact_text(text: str, literals: re.Pattern[str] | None) -> str:
    """Replace literal secrets first (they are exact), then credential shapes, each only
    where its needles are (see `_SHAPES`)."""
    if literals is not None:
        text = literals.sub(REDACTED, text)
    lowered = text.lower()
    for needle in _ANY_NEEDLE:
        if needle in lowered:
            break
    else:
        return text
    for pattern, replacement, needles in _SHAPES:
        if all(needle in lowered for needle in needles):
            text, count = pattern.subn(replacement, text)
            if count:
                lowered = text.lower()
    if any(needle in lowered for needle in _PAIR_NEEDLES):
        text = _PAIR.sub(_redact_pair, text)
    return text


def _redact_pair(match: re.Match[str]) -> str:
    """Redact the value of a secret-named pair, unless the value is clearly code."""
    whole = match.group(0)
    start = match.start()
    for group in ("dq", "sq"):
        value = match.group(group)
        if value is not None:
            if not value or value == REDACTED:
                return whole
            head = whole[: match.start(group) - start]
            return f"{head}{REDACTED}{whole[match.end(group) - start:]}"
    value = match.group("uv")
    if _looks_like_code(value, match) or (match.group("op") == ":" and value.isalpha()):
        return whole
    return whole[: match.start("uv") - start] + REDACTED


def _looks_like_code(value: str, match: re.Match[str]) -> bool:
    """True for `api_key=api_key`, `token=None`, `password=os.environ[...]`, `$TOKEN`...

    Recorded tool inputs are re-executed on replay, so redacting a variable name there
    would break the code while protecting nothing.
    """
    follower = match.string[match.end():match.end() + 1]
    if follower in ("(", "[") or value[0] in "$%":
        return True
    if value.lower() in _CODE_LITERALS:
        return True
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value):
        return True
    return re.fullmatch(r"[A-Za-z_]\w*", value) is not None and _KEY_ONLY.search(value) is not None


def _literal_secrets(explicit: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for the explicit secrets and the secret environment values."""
    env = tuple(sorted(_secret_env_values()))
    return _compile_literals(explicit, env)


class _EnvSeen:
    """The environment as last read and its secret values: every output of a kernel is
    redacted, and reading the whole environment again for each one cost more than the
    redaction."""

    snapshot: tuple[object, ...] | None = None
    values: frozenset[str] = frozenset()


_ENV_SEEN = _EnvSeen()


def _secret_env_values() -> frozenset[str]:
    """Values of environment variables whose name says they hold a secret (read again
    whenever the environment changed: a snapshot of its raw items is compared first)."""
    snapshot = environment()
    if snapshot == _ENV_SEEN.snapshot:
        return _ENV_SEEN.values
    found = set()
    for name, value in os.environ.items():
        if is_secret_env_name(name) and len(value) >= _MIN_ENV_VALUE:
            found.add(value)
    values = frozenset(found)
    _ENV_SEEN.snapshot, _ENV_SEEN.values = snapshot, values
    return values


@lru_cache(maxsize=32)
def _compile_literals(explicit: tuple[str, ...], env: tuple[str, ...]) -> re.Pattern[str] | None:
    """Longest first, so a secret that contains another is replaced whole.

    A secret that is part of the marker ("REDACTED", a placeholder value) must not be
    redacted again inside an earlier marker, or every redaction of a record would grow it
    ("[[REDACTED]]"): then the marker is one of the alternatives, replaced by itself.
    """
    found = {s for s in explicit if isinstance(s, str) and len(s) >= _MIN_EXPLICIT} | set(env)
    if not found:
        return None
    if any(s in REDACTED for s in found):
        found.add(REDACTED)
    ordered = sorted(found, key=lambda s: (-len(s), s))
    return re.compile("|".join(re.escape(s) for s in ordered))


#: The shortest start of a literal secret held back from a stream: from its first
#: character on, since what was sent cannot be taken back when the rest arrives.
_MIN_HELD = 1


def unfinished_secret(text: str, *, secrets: Iterable[str] = ()) -> int:
    """How many characters at the end of `text` are the start of a literal secret (an
    explicit one or a secret-named environment value) but not all of it: a stream that
    sends `text` now and the rest later would leak it in pieces, so that end waits."""
    found = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_EXPLICIT}
    found |= _secret_env_values()
    longest = 0
    for secret in found:
        if secret[:_MIN_HELD] not in text[-(len(secret) - 1):]:
            continue  # the usual case, found without trying every length
        for size in range(min(len(secret) - 1, len(text)), max(_MIN_HELD, longest + 1) - 1,
                          -1):
            if text.endswith(secret[:size]):
                longest = size
                break
    return longest


def redacted_chunk(text: str) -> tuple[str, str]:
    """A streamed chunk (with what the stream held back before it), redacted and split:
    (what can be sent now, the end that could be the start of a secret and waits for the
    next chunk). Shared by every stream that leaves the package: kernel output, ACP."""
    whole = redact_text(text)
    wait = unfinished_secret(whole)
    return (whole[:-wait], whole[-wait:]) if wait else (whole, "")
