"""The environment a server process gets: what servers need to run, never a secret.

A server does not inherit proctor's environment (it holds API keys). It gets the variables
tools need to work where the user works: identity and paths (HOME, PATH, USER, SHELL, TERM,
TMPDIR), locale (LANG, LANGUAGE, LC_*, TZ), XDG_* folders, certificate bundles (SSL_CERT_FILE,
SSL_CERT_DIR, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, CURL_CA_BUNDLE and any *CERT*/*CA_BUNDLE*
name), proxies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, either case), the settings of
the tools that launch servers (UV_*, PIP_*, PIPX_*, npm_config_*, NPM_CONFIG_*, YARN_*, PNPM_*,
BUN_*) and the display (DISPLAY, WAYLAND_DISPLAY, COLORTERM), plus the names a suite or server lists in
``env_passthrough`` and what its ``env:`` sets. Whatever its name, a variable is withheld when it
looks secret: a name the redactor calls secret (KEY, TOKEN, SECRET, PASSWORD, AUTH, ...), a value
shaped like a credential, or a URL with a password in it (``http://user:pw@proxy``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from proctor.store.redaction import SECRET_NAME, Redactor

_NEEDED = frozenset(
    {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE", "TZ",
     "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
     "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
     "COLORTERM", "DISPLAY", "WAYLAND_DISPLAY"}
)  # fmt: skip
_NEEDED_PREFIXES = (
    "LC_",
    "XDG_",
    "UV_",
    "PIP_",
    "PIPX_",
    "npm_config_",
    "NPM_CONFIG_",
    "YARN_",
    "PNPM_",
    "BUN_",
)
_CERTIFICATES = re.compile(r"CERT|CA_BUNDLE|CAINFO|SSL_ROOTS", re.I)
_URL_PASSWORD = re.compile(r"://[^/\s:@]*:[^/\s@]+@")
# The shell's own bookkeeping: never what a server misses, so never named in a note.
_SHELL_NOISE = frozenset({"_", "PWD", "OLDPWD", "SHLVL", "PS1", "PS2", "PS4", "COLUMNS", "LINES"})
_SHAPES = Redactor()  # no known values: only the token shapes
NOTE_NAMES = 30


def looks_secret(name: str, value: str) -> bool:
    """Withheld whatever list names it: a secret-looking name, a credential's shape, a URL password."""
    if SECRET_NAME.search(name) or _URL_PASSWORD.search(value):
        return True
    return _SHAPES.redact(value) != value


def is_needed(name: str, passthrough: Iterable[str] = ()) -> bool:
    """Whether ``name`` is one servers get (before the secret check): the rule above, or listed."""
    return (
        name in _NEEDED
        or name.startswith(_NEEDED_PREFIXES)
        or bool(_CERTIFICATES.search(name))
        or any(fnmatchcase(name, pattern) for pattern in passthrough)
    )


def child_env(
    extra: Mapping[str, str], passthrough: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A server's whole environment: what it needs from ``environ`` (default: proctor's), without
    anything secret-looking, plus ``extra`` (its config's ``env:``, which always wins)."""
    source = os.environ if environ is None else environ
    patterns = list(passthrough)
    passed = {
        k: v
        for k, v in source.items()
        if is_needed(k, patterns)
        and not v.startswith("()")
        and not looks_secret(k, v)  # () : a shell function
    }
    return passed | dict(extra)


def not_received(
    extra: Mapping[str, str], passthrough: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """The names of proctor's variables a server did not get: (not passed, withheld as secret)."""
    source = os.environ if environ is None else environ
    patterns = list(passthrough)
    given = child_env(extra, patterns, source)
    missing = sorted(k for k in source if k not in given and k not in _SHELL_NOISE)
    secret = [k for k in missing if is_needed(k, patterns) or looks_secret(k, source[k])]
    return [k for k in missing if k not in secret], secret


def env_note(extra: Mapping[str, str], passthrough: Iterable[str] = ()) -> str:
    """What a failed start's message says about the environment the server did not receive."""
    plain, secret = not_received(extra, passthrough)
    if not plain and not secret:
        return ""
    parts = []
    if plain:
        more = f" and {len(plain) - NOTE_NAMES} more" if len(plain) > NOTE_NAMES else ""
        parts.append(f"not passed: {', '.join(plain[:NOTE_NAMES])}{more}")
    if secret:
        parts.append(f"withheld as secret-looking: {', '.join(secret[:NOTE_NAMES])}")
    return (
        "\n[environment] the server got only what servers need of proctor's environment; "
        + "; ".join(parts)
        + ". Add a name to "
        "env_passthrough: in suite.yaml (or the server's entry); hand a credential with env: {NAME: ${NAME}}"
    )


__all__ = ["child_env", "env_note", "is_needed", "looks_secret", "not_received"]
