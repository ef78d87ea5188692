"""What counts as a secret by its name, in one place: environment variables (whose values
redaction replaces and the trust card hides) and the variables of a user's namespace
(whose values the kernel tools mask), plus the API credentials a cell never shows."""

from __future__ import annotations

import re

__all__ = ["API_CREDENTIALS", "ENV_SECRET_WORDS", "NOT_SECRET_ENV_WORDS",
           "is_secret_env_name", "is_secret_variable_name"]

#: Environment variable names containing one of these mark their value as secret...
ENV_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
#: ...unless the name is about authorship (GIT_AUTHOR_NAME is a name, not a secret).
NOT_SECRET_ENV_WORDS = ("AUTHOR",)
#: The model API's credentials: their values never reach a notebook, whatever their shape.
API_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

#: Words that make a variable name secret (`db_password`, `api_token`, `aws_secret_key`,
#: `privateKey`); whole words only, so `tokenizer`, `keyboard` and `authors` stay visible.
_VARIABLE_SECRET_WORDS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "key", "keys",
    "apikey", "credential", "credentials", "auth", "bearer", "cookie", "otp", "pin"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable is named like one that holds a secret."""
    upper = name.upper()
    return (not any(word in upper for word in NOT_SECRET_ENV_WORDS)
            and any(word in upper for word in ENV_SECRET_WORDS))


def is_secret_variable_name(path: str) -> bool:
    """Whether a variable (or any part of a dotted path) is named like a secret."""
    return any(word.lower() in _VARIABLE_SECRET_WORDS
               for part in path.split(".") for word in _WORD.findall(part))
