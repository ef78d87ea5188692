"""One corpus of secrets as streams send them in pieces, shared by the tests of every
outbound channel (the redactor, kernel streams and displays, ACP chunks, records,
transcripts, stores): each case is a text holding one secret of one kind redaction knows
(every credential shape, a secret-named pair, an explicit secret, a secret environment
value), and what of it must never be seen, whole or in part.

A channel passes a case when no `WINDOW` characters in a row of what must stay hidden
reach its output (`leaks`), wherever the stream was split; with no forced flush, what it
sends, joined, is what redacting the whole text gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["CORPUS", "ENV", "ENV_NAME", "WINDOW", "SplitCase", "leaks", "splits"]

#: The secret environment variable the env case needs (its name says it is secret).
ENV_NAME = "FUXI_TEST_SPLIT_SERVICE_TOKEN"
ENV_VALUE = "Vq8Lm2Xw7Rz4Tn6Hk3"
ENV = {ENV_NAME: ENV_VALUE}
#: A run of this many characters of a hidden part in an output is a leak.
WINDOW = 6

_KEY_BODY = ("MIIEowIBAAKCAQEAq7BFUsLTcW3jPp9vQxYz4n8GkR2uDf5hJ1wT0cVbXsNaE3yLo6m",
             "Zt9KdW2pHvQ4sJ8gUfY7cR1nTxE5aL3bM0oPiS6wVkGzD2qFjCyNhBrXu4eAt7lIm9",
             "p3Q==")


@dataclass(frozen=True)
class SplitCase:
    """A text holding one secret; `hidden` are the parts of it no output may show."""

    name: str
    text: str
    hidden: tuple[str, ...]
    #: explicit secrets the redaction is given (only channels that take them: the
    #: redactor, records)
    secrets: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def explicit(self) -> bool:
        return bool(self.secrets)


def _case(name: str, before: str, secret: str, after: str, hidden: str | None = None,
          **kwargs: object) -> SplitCase:
    return SplitCase(name, f"{before}{secret}{after}", (hidden or secret,), **kwargs)  # type: ignore[arg-type]


CORPUS: tuple[SplitCase, ...] = (
    _case("anthropic key", "the key sk-ant-api03-", "Xy7Gq2Lw9Pz4Km8Rt1Vb6Nc3Hd5Jf0Qs2Wu7Ea",
          " works\n"),
    _case("openai project key", "OPENAI sk-proj-", "Hq4Wz8Nt2Lp6Ry1Kc9Vm3Xb7Gd5Fj0", " set\n"),
    _case("openai key", "legacy sk-", "Tz3Mq8Wk1Vn6Rp4Lx9Hc2Bd7Gf5Js0Ny", " here\n"),
    _case("aws key id", "id AKIA", "QZ7T4W2XK9R3M6VN", " done\n"),
    _case("github token", "gh ghp_", "Rk2Vw7Mz4Qn9Lt1Xp6Hc3Bd8Gf5Js0NyEuA", " ok\n"),
    _case("github fine-grained token", "pat github_pat_", "11AQ7Wz2Lk_9Rt4Vm8Nc3Xp6Hd1Gf5Jq0",
          " ok\n"),
    _case("slack token", "slack xoxb-", "4821937465-Wq7Zt2Lm9Kp4Xv", " ok\n"),
    _case("jwt", "jwt ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJxN3ZtIn0.Rw4Tz9Lq2Km7Xp1Vn6Hc", " ok\n",
          hidden="eyJzdWIiOiJxN3ZtIn0.Rw4Tz9Lq2Km7Xp1Vn6Hc"),
    _case("bearer token", "Authorization: Bearer ", "Zq7Wm2Tk9Lx4Rv1Np6", " next\n"),
    _case("password in a url", "clone https://deploy:", "Mq7Zt2Wk9Rx", "@example.com/r.git now\n"),
    SplitCase("private key", "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(_KEY_BODY)
              + "\n-----END RSA PRIVATE KEY-----\nafter the key\n", _KEY_BODY),
    _case("password pair", "password=", "Hw7Qz2Mt9Kx4", " rest\n"),
    _case("quoted api key", '{"api_key": "', "Lq8Wz3Tm7Kv2Xn", '"}\n'),
    _case("single-quoted token", "token: '", "Pz4Wq9Lm2Tk7Xr", "'\n"),
    _case("pair split after the equals", "db_password = ", "Nt6Wq1Zm8Lk3Xv", "\n"),
    _case("explicit secret", "the word ", "Jq5Wz0Tm3Lk8Xp", " appears\n",
          secrets=("Jq5Wz0Tm3Lk8Xp",)),
    _case("secret environment value", "env value ", ENV_VALUE, " here\n", env=dict(ENV)),
)


def leaks(case: SplitCase, output: str, *, received_from: int = 0) -> list[str]:
    """The runs of `WINDOW` hidden characters that `output` shows. With `received_from`,
    only runs holding a character at or after that position of the text (what the
    stream received after it: the start of a secret sent before a forced flush may show,
    its rest may not)."""
    found = []
    for part in case.hidden:
        at = case.text.find(part)
        for i in range(max(0, len(part) - WINDOW + 1)):
            run = part[i:i + WINDOW]
            if at + i + WINDOW > received_from and run in output:
                found.append(run)
    return found


def splits(text: str, cuts: Iterable[int]) -> list[str]:
    """`text` cut at the given positions (in any order, repeats and ends ignored)."""
    points = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def every_cut(case: SplitCase) -> Iterator[list[str]]:
    """The case's text in two pieces, cut at every position."""
    for cut in range(1, len(case.text)):
        yield [case.text[:cut], case.text[cut:]]
