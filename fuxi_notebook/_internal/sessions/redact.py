"""Secret redaction for everything a session record stores (N9).

A record ends up in a notebook that gets committed, shared and rendered on GitHub, so any
string that reaches it goes through `redact` first. Three sources of secrets are replaced by
`[REDACTED]`: strings the caller names explicitly, the values of environment variables whose
name says they are secret, and text that looks like a credential (API keys, tokens, private
key blocks, `password=...` pairs). The output depends only on the input and the environment,
never on chance, so the same run always produces the same record (nbval compares it exactly).

Text that leaves in pieces (a kernel stream, the model's answer as ACP chunks or in the live
view, a process's output after its call) goes through `StreamRedactor`, the one streaming
redaction every such channel uses: a piece's end that more text could turn into a secret
waits for the next piece, so what is sent, joined, is what redacting the whole would give,
and the rest of a secret whose start had to be sent is still replaced. `settled` is the same
for an output shown whole as it grows (a running call's output so far).

A text that was cut is redacted whole first, then cut (`redacted_head`). A tool's output is
cut for the model before anything here sees it (`tools/truncate.py`, which marks each cut:
`CUT_MARK`): `redact` finds the marks and redacts each side of a cut on its own, without
what could be part of a secret the cut split (the end before it that more text could have
made a secret, the start after it up to a line break), so no part of a split secret
leaves, whichever channel sends the output, and redacting again changes nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from ..common.reading import environment
from ..common.secret_names import is_secret_env_name
from ..models.access.key_helper import helper_keys
from ..tools.truncate import CUT_MARK

__all__ = ["HOLD_LIMIT", "REDACTED", "StreamRedactor", "redact", "redact_text", "redacted_head",
           "settled", "unfinished_secret"]

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
    explicit = tuple(secrets)
    literals = _literal_secrets(explicit)
    return _walk(value, lambda text: _redact_cut(text, explicit, literals))


def redact_text(text: str, *, secrets: Iterable[str] = ()) -> str:
    """`redact` for a single string."""
    explicit = tuple(secrets)
    return _redact_cut(text, explicit, _literal_secrets(explicit))


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
    whenever the environment changed: a snapshot of its raw items is compared first), and
    every key an `apiKeyHelper` command printed in this process (never in the environment,
    still a secret wherever text is shown or stored)."""
    keys = helper_keys()
    snapshot = environment()
    if snapshot == _ENV_SEEN.snapshot:
        return _ENV_SEEN.values | keys if keys else _ENV_SEEN.values
    found = set()
    for name, value in os.environ.items():
        if is_secret_env_name(name) and len(value) >= _MIN_ENV_VALUE:
            found.add(value)
    values = frozenset(found)
    _ENV_SEEN.snapshot, _ENV_SEEN.values = snapshot, values
    return values | keys if keys else values


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


# --- streams ------------------------------------------------------------------------------

#: The most a stream holds back (characters): an end that could still become a secret
#: and is longer than this is sent anyway, redacted as it stands (its start is kept, so
#: the rest of a secret it began is still recognised). A private key block (an 8192-bit
#: RSA key is about 6.5 KB) fits.
HOLD_LIMIT = 16_384
#: How far before the last word the open end of a line is looked for: a key, its `=` and
#: a quoted value with spaces (`api_key = "a b`), a `Bearer` before its token.
_LOOK_BACK = 256


def _growing(literal: str, then: str = "") -> str:
    """A pattern for any non-empty start of `literal`, or all of it followed by `then`."""
    pattern = then
    for char in reversed(literal):
        pattern = re.escape(char) + (f"(?:{pattern})?" if pattern else "")
    return pattern


#: The end of a text that could still become, or grow, a credential of `_SHAPES` or
#: `_PAIR` when more text follows (each a superset of what its shape needs: holding more
#: only delays it). A private key's body, which spans lines, is `_open_key`'s.
_OPEN = re.compile("(?:" + "|".join((
    _growing("-----BEGIN ", "[A-Z0-9 ]*(?:" + _growing("PRIVATE KEY-----") + ")?"),
    r"(?<![\w-])" + _growing("sk-", r"[A-Za-z0-9_\-]*"),
    r"\b" + _growing("AKIA", "[0-9A-Z]*"),
    r"\b" + _growing("gh", r"[pousr](?:_[A-Za-z0-9]*)?"),
    r"\b" + _growing("github_pat_", "[A-Za-z0-9_]*"),
    r"\b" + _growing("xox", r"[baprs](?:-[A-Za-z0-9\-]*)?"),
    r"\b" + _growing("eyJ", r"[A-Za-z0-9_\-.]*"),
    r"(?i:\b" + _growing("bearer", rf"\s+[{_TOKEN_CHARS}]*") + ")",
    _growing("://", r"[^/\s:@]*(?::[^/\s@]*)?"),
    # a key with its separator and (part of) its value, or a word that may end as a key
    rf"(?i:(?<![\w.\-])[\"']?(?:{_SECRET_KEY}[\"']?[ \t]*(?:[:=][ \t]*"
    r"(?:\"[^\"\n]*|'[^'\n]*|[^\s\"'`,;&(){}\[\]<>]*))?|[A-Za-z0-9_.\-]*))",
)) + r")\Z")
_KEY_SHAPE = _SHAPES[0][0]


def _open_key(text: str, start: int) -> tuple[int, int]:
    """(where the first private key block of `text[start:]` with no end yet starts, where
    the last one that has its end ends): no cut may fall inside a block."""
    if text.find("PRIVATE KEY-----", start) < 0:
        return len(text), start
    closed = start
    for found in _KEY_SHAPE.finditer(text, start):
        if not found.group(0).endswith(f"-----END {found.group(1)}PRIVATE KEY-----"):
            return found.start(), closed
        closed = found.end()
    return len(text), closed


def _open_shape(text: str) -> int:
    """Where the end of `text` that could still become a credential shape starts.

    Only the last line is searched (and the word before a line break, for `Bearer`):
    no shape but a private key spans lines, so a stream pays for its end, not its whole.
    """
    size = len(text)
    floor = max(0, size - HOLD_LIMIT)
    line = max(floor, text.rfind("\n", floor) + 1)
    word = max(line, *(text.rfind(char, line) + 1 for char in " \t\r\f\v"))
    quote = max(text.rfind('"', line), text.rfind("'", line))
    anchor = min(word, quote) if quote >= 0 else word
    search_from = max(line, anchor - _LOOK_BACK)
    if line > floor:
        search_from = min(search_from, _bearer_before(text, line, floor))
    key_open, key_closed = _open_key(text, floor)
    found = _OPEN.search(text, max(search_from, key_closed))
    return min(found.start() if found else size, key_open)


def _bearer_before(text: str, line: int, floor: int) -> int:
    """The start of a `Bearer` that ends the text before `line` (whitespace after it
    allowed), whose token may be on the last line; `line` if there is none."""
    end = line
    while end > floor and text[end - 1].isspace():
        end -= 1
    start = end - len("bearer")
    if start >= floor and text[start:end].lower() == "bearer":
        return start
    return line


def _open_start(text: str, secrets: tuple[str, ...]) -> int:
    """Where the end of `text` that must wait for more starts: the start of a literal
    secret, or of a credential shape that more text could complete or extend."""
    return min(len(text) - unfinished_secret(text, secrets=secrets), _open_shape(text))


class StreamRedactor:
    """The redaction of one stream of text sent out in pieces (a kernel stream, the
    model's answer as ACP chunks, a live view's text): the one place every channel that
    streams goes through.

    Each piece is redacted once, with the end that could still become a secret (the start
    of a key, of `password=`, of a secret's value...) held back until the next piece tells
    (`feed`) or the stream ends or must not wait any longer (`flush`). What is sent is
    what redacting the whole stream at once would give. After a flush the end that was
    sent is kept: if the next piece continues a secret, its rest is replaced too (shown as
    `[REDACTED]`, or not shown when the part sent already was), never sent.
    """

    def __init__(self, *, secrets: Iterable[str] = (), limit: int = HOLD_LIMIT) -> None:
        self._secrets = tuple(s for s in secrets if isinstance(s, str))
        self._limit = limit
        self._sent = ""  # the end already sent, while a secret may continue it
        self._held = ""  # received and not sent yet

    @property
    def holding(self) -> bool:
        """Whether some text waits (for the next piece or a flush)."""
        return bool(self._held)

    def feed(self, piece: str) -> str:
        """What of the stream can be sent now that `piece` arrived, redacted."""
        if not piece:
            return ""
        self._held += piece
        window = self._sent + self._held
        cut = max(_open_start(window, self._secrets), len(self._sent))
        if len(window) - cut > self._limit:
            return self.flush()
        if cut == len(self._sent):
            return ""
        sent = self._settle(window[:cut])
        self._sent, self._held = "", window[cut:]
        return sent

    def flush(self) -> str:
        """Everything held, redacted as it stands (the stream ended, or cannot wait)."""
        if not self._held:
            return ""
        window = self._sent + self._held
        sent = self._settle(window)
        self._sent, self._held = self._still_open(window), ""
        return sent

    def _still_open(self, window: str) -> str:
        """The end of `window` that a secret could still continue (kept to recognise the
        rest of it), at most `limit` characters: a longer one keeps its start (what makes
        it a key, a token, a block) and its end, which is what a shape needs to go on."""
        open_end = window[_open_start(window, self._secrets):]
        if len(open_end) <= self._limit:
            return open_end
        half = self._limit // 2
        return open_end[:half] + open_end[-half:]

    def _settle(self, text: str) -> str:
        """The redaction of `text` past what was sent of it already (`self._sent`)."""
        literals = _literal_secrets(self._secrets)
        whole = _redact_text(text, literals)
        if not self._sent:
            return whole
        before = _redact_text(self._sent, literals)
        if whole.startswith(before):
            return whole[len(before):]
        same = _common_start(whole, before)
        if REDACTED in before[same:]:  # a part redacted then is not now: never send it
            return _redact_text(text[len(self._sent):], literals)
        return whole[same:]  # the rest of a secret whose start was sent


def _common_start(one: str, other: str) -> int:
    """How many characters `one` and `other` start with in common."""
    size = 0
    for mine, theirs in zip(one, other, strict=False):
        if mine != theirs:
            break
        size += 1
    return size


def settled(text: str, *, secrets: Iterable[str] = ()) -> str:
    """What can be shown of a text still being written (a running call's output so far),
    redacted: without the end that more output could turn into a secret."""
    explicit = tuple(secrets)
    return redact_text(text[:_open_start(text, explicit)], secrets=explicit)


# --- cuts ---------------------------------------------------------------------------------

def redacted_head(text: str, limit: int, *, secrets: Iterable[str] = ()) -> tuple[str, int]:
    """(the first `limit` characters of `text` redacted whole, how many characters of the
    redacted text were left out): how a text is cut to be shown (a summary, a title, a
    capped detail), so the cut never falls inside a secret that redaction then could not
    recognise. The caller says, its own way, that something was left out."""
    whole = redact_text(text, secrets=secrets)
    limit = max(limit, 0)
    return whole[:limit], max(0, len(whole) - limit)


def _redact_cut(text: str, explicit: tuple[str, ...], literals: re.Pattern[str] | None) -> str:
    """`_redact_text`, each side of a cut a tool's cap made (`CUT_MARK`) on its own and
    without what could be part of a secret the cut split: before a cut, the end more text
    could have made a secret (`settled`'s boundary); after it, the start up to its first
    line break, or further, to the end of a private key block or of a literal secret with
    line breaks whose start was cut off."""
    if "truncated" not in text:  # no mark: the usual case, found without a search
        return _redact_text(text, literals)
    marks = list(CUT_MARK.finditer(text))
    if not marks:
        return _redact_text(text, literals)
    out: list[str] = []
    start, tail, open_before = 0, False, False
    for mark in [*marks, None]:
        piece = text[start:mark.start() if mark is not None else len(text)]
        if tail:
            piece = piece[_rest_start(piece, explicit, after_open=open_before):]
        if mark is None:
            out.append(_redact_text(piece, literals))
        else:
            shown, open_before = _settled_head(piece, explicit, literals)
            out.append(shown)
            out.append(mark.group(0))
            start, tail = mark.end(), mark.group("middle") is not None
    return "".join(out)


#: At most this many times is a head cut again after redaction changed its end.
_SETTLE_ROUNDS = 16


def _settled_head(text: str, explicit: tuple[str, ...], literals: re.Pattern[str] | None
                  ) -> tuple[str, bool]:
    """(`text`, cut at its end, redacted and without an end that more text could have
    made a secret; whether such an end was left out). A redacted end can look open where
    the raw one did not (a quote after `[REDACTED]`): it is cut again, so redacting the
    result again changes nothing."""
    end = _settled_end(text, explicit)
    shown = _redact_text(text[:end], literals)
    for _ in range(_SETTLE_ROUNDS):
        again = _settled_end(shown, explicit)
        if again == len(shown):
            break
        shown = _redact_text(shown[:again], literals)
    return shown, end < len(text)


def _settled_end(text: str, explicit: tuple[str, ...]) -> int:
    """Where `text`, cut at its end, may end: before any end that more text could have
    made a secret (again and again, so redacting the result again cuts nothing more)."""
    end = len(text)
    while True:
        cut = _open_start(text[:end], explicit)
        if cut >= end:
            return end
        end = cut


_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")


def _rest_start(text: str, explicit: tuple[str, ...], *, after_open: bool) -> int:
    """Where `text`, cut at its start, may start: at a line break, past the end of a
    private key block or of a literal secret whose start was cut off. `after_open`: the
    text before the cut ended in what could be the start of a secret, whose rest may
    follow blank space or a line break (`Bearer` then its token): the first line with
    something on it goes too. A text that starts with a line break and continues nothing
    is left whole (so redacting the result again cuts nothing more)."""
    start = len(text) - len(text.lstrip()) if after_open else 0
    while True:
        reach = max(_key_rest(text, start), start + _secret_rest(text[start:], explicit))
        if reach == start and (start == len(text) or text[start] == "\n"):
            return start
        line = text.find("\n", reach)
        start = len(text) if line < 0 else line


def _key_rest(text: str, start: int) -> int:
    """The end of a private key block whose start is not in `text[start:]` (its end line
    comes before any begin line), or `start`."""
    if text.find("PRIVATE KEY-----", start) < 0:
        return start
    end = _KEY_END.search(text, start)
    if end is None or text.find("-----BEGIN ", start, end.start()) >= 0:
        return start
    return end.end()


def _secret_rest(text: str, explicit: tuple[str, ...]) -> int:
    """How many characters at the start of `text` end a literal secret that holds a line
    break (its start cut off). One without line breaks ends on the line the cut fell in,
    which `_rest_start` leaves out anyway."""
    found = {s for s in explicit if isinstance(s, str) and len(s) >= _MIN_EXPLICIT}
    found |= _secret_env_values()
    longest = 0
    for secret in (s for s in found if "\n" in s):
        for size in range(min(len(secret) - 1, len(text)), longest, -1):
            if text.startswith(secret[-size:]):
                longest = size
                break
    return longest
