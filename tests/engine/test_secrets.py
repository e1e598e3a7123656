from __future__ import annotations

import pytest

from proctor.engine.secrets import redact, register_secret


def test_env_secrets_and_key_shapes_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok_abcdefghijkl")
    text = (
        "failed with tok_abcdefghijkl and sk-ant-api03-AAAAAAAAAAAAAAAAAAAA and Bearer abcdefghijklmnopqrstu"
    )
    out = redact(text)
    assert "tok_abcdefghijkl" not in out and "sk-ant" not in out and "abcdefghijklmnopqrstu" not in out
    assert out.count("[redacted]") == 3


def test_registered_secret_is_redacted() -> None:
    register_secret("hunter2hunter2")
    assert redact("password hunter2hunter2!") == "password [redacted]!"


def test_ordinary_text_is_untouched() -> None:
    assert redact("tinyq/retry.py:42 compute_backoff") == "tinyq/retry.py:42 compute_backoff"
