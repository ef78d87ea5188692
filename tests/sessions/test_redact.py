"""Redaction: secrets never reach the notebook (N9), ordinary text is left alone."""

from __future__ import annotations

import json

import pytest

from fuxi_notebook._internal.sessions.record import build_record
from fuxi_notebook._internal.sessions.redact import REDACTED, redact, redact_text

from .helpers import build_kwargs, result_message

JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")


@pytest.mark.parametrize(("text", "expected"), [
    ("key sk-ant-api03-abcdefghij_KLMNOPQRST-uvw123 end", "key [REDACTED] end"),
    ("export OPENAI=sk-abcdefghijklmnopqrstuvwx1234", "export OPENAI=[REDACTED]"),
    ("sk-proj-abc_def-ghijklmnopqrstuvwxyz12", "[REDACTED]"),
    ("aws AKIAIOSFODNN7EXAMPLE x", "aws [REDACTED] x"),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [REDACTED]"),
    ("slack xoxb-1234567890-abcdef", "slack [REDACTED]"),
    (f"jwt {JWT} end", "jwt [REDACTED] end"),
    ("Authorization: Bearer abc123def456ghi789", "Authorization: Bearer [REDACTED]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\nxyz\n-----END RSA PRIVATE KEY-----\nafter",
     "-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----\nafter"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEabc (cut off",
     "-----BEGIN PRIVATE KEY-----\n[REDACTED]\n-----END PRIVATE KEY-----"),
    ("api_key=abc123 APIKEY=zz9", "api_key=[REDACTED] APIKEY=[REDACTED]"),
    ('{"password": "hunter2", "Secret": "x y"}',
     '{"password": "[REDACTED]", "Secret": "[REDACTED]"}'),
    ("token='xyz' access_key = q1w2e3", "token='[REDACTED]' access_key = [REDACTED]"),
    ("DB_PASSWORD=letmein\nGITHUB_TOKEN: 'abc'",
     "DB_PASSWORD=[REDACTED]\nGITHUB_TOKEN: '[REDACTED]'"),
    ("https://x.test/?token=abc123&page=2", "https://x.test/?token=[REDACTED]&page=2"),
    ("postgres://user:pa55word@db:5432/x", "postgres://user:[REDACTED]@db:5432/x"),
])
def test_secret_patterns_are_redacted(text, expected):
    assert redact_text(text) == expected
    assert redact_text(expected) == expected  # idempotent


@pytest.mark.parametrize("text", [
    "use the sk- prefix, e.g. sk-short",
    "task-management-system and disk-usage-report-generator",
    "Bearer authentication is common; bearer instruments.",
    "max_tokens=1024 tokens=5 token_count=3 secretary=bob",
    "The password: use a strong one. token: it expires",
    "client = Anthropic(api_key=api_key)",
    'token = os.environ["TOKEN"]; password = getpass.getpass(); secret = None',
    "API_KEY=$(cat key.txt) TOKEN=${TOKEN}",
    "if password == 'x': pass",
    "AKIA is a prefix; ghp_short; eyJ alone",
    "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
])
def test_ordinary_text_is_not_redacted(text):
    assert redact_text(text) == text


def test_explicit_secrets_longest_first_and_short_ones_ignored():
    text = "key=abcd-1234-efgh and abcd-1234 and id 7"
    out = redact_text("key abcd-1234-efgh and abcd-1234 and id 7",
                      secrets=["abcd-1234", "abcd-1234-efgh", "7", ""])
    assert out == "key [REDACTED] and [REDACTED] and id 7"
    assert redact_text(text, secrets=["abcd-1234-efgh"]) == "key=[REDACTED] and abcd-1234 and id 7"


def test_env_var_values_with_secret_names_are_redacted(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "abcdefgh12345")
    monkeypatch.setenv("MY_SERVICE_KEY", "1")  # too short to redact
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Jane Developer")  # a name, not a secret
    monkeypatch.setenv("MY_SERVICE_URL", "https://service.example")  # not a secret name
    text = "token abcdefgh12345 v1 by Jane Developer at https://service.example"
    assert redact_text(text) == "token [REDACTED] v1 by Jane Developer at https://service.example"
    monkeypatch.delenv("MY_SERVICE_TOKEN")
    assert redact_text(text) == text


def test_redact_walks_structures_keeps_keys_and_opaque_payloads():
    secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AKIAIOSFODNN7EXAMPLE"}}
    value = {secret: [secret, (secret, 3)], "n": 1.5, "none": None, "img": image,
             "thinking": {"type": "thinking", "thinking": secret, "signature": secret}}
    out = redact(value)

    assert out == {secret: [REDACTED, (REDACTED, 3)], "n": 1.5, "none": None, "img": image,
                   "thinking": {"type": "thinking", "thinking": REDACTED, "signature": secret}}
    assert value[secret][0] == secret  # the input is not modified


def test_build_record_redacts_every_part(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "k" * 40)
    key = "sk-ant-api03-" + "k" * 40
    messages = [
        {"role": "user", "content": f"use {key} and mypass99"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                           "input": {"command": "echo $KEY ghp_" + "a" * 36}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "AKIAIOSFODNN7EXAMPLE"}]}]},
    ]
    record = build_record(**build_kwargs(
        prompt=f"use {key} and mypass99", messages=messages, secrets=["mypass99"],
        options={"env": {"API_TOKEN": "password=hunter2"}},
        approvals=[{"tool_use_id": "t1", "tool_name": "Bash", "decision": "allow",
                    "source": "rule", "rule": f"Bash(echo {key})"}],
        result=result_message(result=f"done with {key}", errors=["mypass99 failed"])))
    stored = json.dumps(record.model_dump(mode="json"))

    for secret in (key, "mypass99", "hunter2", "ghp_aaaa", "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in stored
    assert record.prompt == "use [REDACTED] and [REDACTED]"
    assert record.options == {"env": {"API_TOKEN": "password=[REDACTED]"}}
    assert record.approvals[0].rule == "Bash(echo [REDACTED])"
    assert record.result.errors == ["[REDACTED] failed"]


@pytest.mark.parametrize(("value", "redacted"), [("a1b2c3d4", True), ("a1b2c3d", False)])
def test_a_secret_env_value_counts_from_eight_characters(monkeypatch, value, redacted):
    monkeypatch.setenv("FUXI_TEST_TOKEN", value)
    text = f"the value {value} here"
    assert redact_text(text) == ("the value [REDACTED] here" if redacted else text)


@pytest.mark.parametrize(("secret", "redacted"), [("q7#x", True), ("q7#", False)])
def test_an_explicit_secret_counts_from_four_characters(secret, redacted):
    text = f"the value {secret} here"
    assert redact_text(text, secrets=[secret]) == (
        "the value [REDACTED] here" if redacted else text)
    assert redact({"v": [text]}, secrets=[secret]) == {"v": [redact_text(text,
                                                                         secrets=[secret])]}


def test_a_secret_inside_the_marker_does_not_grow_earlier_markers(monkeypatch):
    """A placeholder value (API_KEY=REDACTED) or an explicit secret that is part of the
    marker: a record redacted again keeps its markers as they are (was "[[REDACTED]]")."""
    monkeypatch.setenv("FUXI_TEST_API_KEY", "REDACTED")
    once = redact_text("key REDACTED and sk-ant-api03-abcdefghijklmnopqrstuvwxyz")
    assert once == "key [REDACTED] and [REDACTED]"
    assert redact_text(once) == once
    assert redact_text("abc DACT [REDACTED] def", secrets=["DACT"]) == (
        "abc [REDACTED] [REDACTED] def")
