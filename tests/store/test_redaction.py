from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store.redaction import Redactor, may_need_redaction, redact, register_secret, secret_values

# Planted, well-formed but fake credentials of every shape the redactor knows.
PLANTED = {
    "github-token": "ghp_" + "A1b2C3d4E5" * 4,
    "github-pat": "github_pat_11ABCDEFG0" + "x" * 60,
    "anthropic-key": "sk-ant-api03-" + "Z" * 40,
    "openai-key": "sk-proj-" + "q" * 40,
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "slack-token": "xoxb-1234567890-abcdefghijkl",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7r0\nabc+/=\n-----END RSA PRIVATE KEY-----",
}


def test_every_known_token_shape_is_redacted_with_its_kind() -> None:
    for kind, secret in PLANTED.items():
        out = redact(f"config: {secret} end")
        assert secret not in out, kind
        assert "[redacted: " in out and out.endswith(" end"), (kind, out)
    assert redact(PLANTED["aws-access-key"]) == "[redacted: aws-access-key]"


def test_env_secrets_and_key_shapes_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok_abcdefghijkl")
    text = (
        "failed with tok_abcdefghijkl and sk-ant-api03-AAAAAAAAAAAAAAAAAAAA and Bearer abcdefghijklmnopqrstu"
    )
    out = redact(text)
    assert "tok_abcdefghijkl" not in out and "sk-ant" not in out and "abcdefghijklmnopqrstu" not in out
    assert "[redacted: $MY_SERVICE_TOKEN]" in out and out.count("[redacted: ") == 3


def test_registered_secret_is_redacted_also_as_it_appears_inside_json() -> None:
    register_secret('hunter2"hunter2', "DB_PASSWORD")
    assert redact('password hunter2"hunter2!') == "password [redacted: $DB_PASSWORD]!"
    assert redact('{"p": "hunter2\\"hunter2"}') == '{"p": "[redacted: $DB_PASSWORD]"}'


def test_short_or_ordinary_values_are_untouched() -> None:
    r = Redactor.from_environment({"API_KEY": "short", "HOME": "/home/someone/long-path"})
    assert r.redact("short /home/someone/long-path") == "short /home/someone/long-path"
    assert (
        redact("tinyq/retry.py:42 compute_backoff sk-short") == "tinyq/retry.py:42 compute_backoff sk-short"
    )


@pytest.mark.parametrize(
    ("name", "secret"),
    [("ANTHROPIC_API_KEY", True), ("Authorization", True), ("x-api-key", True), ("GITHUB_PAT", True),
     ("DB_PASSWORD", True), ("APIKEY", True), ("GIT_AUTHOR_NAME", False), ("KEYBOARD_LAYOUT", False),
     ("PATH", False)],
)  # fmt: skip
def test_secret_looking_names(name: str, secret: bool) -> None:
    assert bool(secret_values({name: "a-value-long-enough"})) is secret


def test_a_secret_variable_set_to_a_new_value_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROTATING_API_TOKEN", "first-secret-value-123")
    assert "first-secret-value-123" not in redact("x first-secret-value-123 y")
    monkeypatch.setenv("ROTATING_API_TOKEN", "second-secret-value-456")
    assert redact("a first-secret-value-123 b") == "a first-secret-value-123 b", (
        "the old value is not a secret now"
    )
    assert "second-secret-value-456" not in redact("second-secret-value-456")


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=60),
    st.sampled_from(
        ["", *PLANTED.values(), "tok_abcdefghijkl", "héllo-wörld-sécret", "task-", "network-sk-"]
    ),
    st.text(max_size=60),
)
def test_the_check_over_stored_bytes_misses_nothing_redact_replaces(
    before: str, middle: str, after: str
) -> None:
    """The writer skips ``redact`` for stored JSON this check passes: it must flag every payload
    ``redact`` would change (a secret value, escaped or not, or any token shape)."""
    r = Redactor({"tok_abcdefghijkl": "SERVICE_TOKEN", "héllo-wörld-sécret": "UNICODE_SECRET"})
    for stored in (
        json.dumps({"content": before + middle + after}, ensure_ascii=False),
        json.dumps({"content": before + middle + after}),
    ):
        if r.redact(stored) != stored:
            assert r.may_change(stored.encode()), stored


def test_ordinary_words_that_start_like_a_token_need_no_redaction() -> None:
    for text in ("task-runner network-io sk-short", "a bearer of news", "xox", "ghp_short", '{"a": "AKIA"}'):
        assert redact(text) == text
        assert not may_need_redaction(text.encode()), text


@pytest.mark.parametrize("kind", sorted(PLANTED))
@pytest.mark.parametrize(
    "before",
    ["\x1b[31m", "\x1b[1;4m", "\x1b(B", "MY_", "prefix_", "x", "\\n", "\\u001b[31m", "\\x1b[0m", "\x9b0m"],
)
def test_a_token_is_redacted_whatever_character_touches_it(kind: str, before: str) -> None:
    """Shape boundaries follow what a token can contain: a colour code, an underscore inside a
    longer name or a JSON escape right before it does not hide it (word boundaries did)."""
    secret = PLANTED[kind]
    if before == "x" and kind == "openai-key":
        return  # "xsk-..." reads as a word ending in "sk" (task-, disk-): generic prefixes need a start
    for text in (f"{before}{secret}\x1b[0m", json.dumps(f"{before}{secret}")):
        out = redact(text)
        assert secret[4:20] not in out, (kind, before, out)
        assert may_need_redaction(text.encode()), (kind, before)


def test_a_token_followed_by_more_characters_is_still_redacted() -> None:
    assert redact("AKIAIOSFODNN7EXAMPLEMORE") == "[redacted: aws-access-key]MORE"
    assert "A1b2C3" not in redact(PLANTED["github-token"] + "\x1b[0m;")


def test_every_header_value_but_standard_ones_is_a_secret() -> None:
    from proctor.store.redaction import header_secrets

    found = header_secrets(
        {"X-Workspace": "workspace-credential-1", "Authorization": "Bearer opaque-credential-2",
         "Content-Type": "application/json", "User-Agent": "proctor-test-agent/1.0", "X-Short": "abc"}
    )  # fmt: skip
    assert found == {
        "workspace-credential-1": "header X-Workspace",
        "Bearer opaque-credential-2": "header Authorization",
        "opaque-credential-2": "header Authorization",
    }


def test_registered_secrets_are_given_to_another_redactor() -> None:
    from proctor.store.redaction import register_secrets, registered_secrets

    register_secrets({"handed-on-secret-77": "header X-Team"})
    other = Redactor(registered_secrets())
    assert other.redact("echo handed-on-secret-77") == "echo [redacted: $header X-Team]"
