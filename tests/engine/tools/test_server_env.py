"""A server gets the environment it needs (certificates, proxies, locale, XDG, tool caches, the
suite's env_passthrough) and never a secret; a server that fails to start is told what it missed.

The servers are real: ``@modelcontextprotocol/server-everything`` (its ``get-env`` tool echoes the
environment it received), ``mcp-server-fetch`` (httpx, which verifies TLS against
``SSL_CERT_FILE``) fetching from an HTTPS server on 127.0.0.1 whose certificate a test CA
signed, and ``mcp-server-git`` refusing a repository that does not exist.
"""

from __future__ import annotations

import datetime
import http.server
import json
import os
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from proctor.app.cli import main
from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.mcp_launch import ServerStartError
from proctor.engine.tools.server_env import child_env
from proctor.scenarios.schema import StdioServer

REFERENCE = Path(__file__).resolve().parents[2] / "reference_servers"
EVERYTHING = REFERENCE / "node_modules" / ".bin" / "mcp-server-everything"
FETCH = REFERENCE / ".venv-official" / "bin" / "mcp-server-fetch"
GIT = REFERENCE / ".venv-git" / "bin" / "mcp-server-git"
installed = pytest.mark.skipif(
    not (EVERYTHING.exists() and FETCH.exists() and GIT.exists()),
    reason="run `make test`: it installs the reference servers",
)


def test_what_a_server_needs_is_passed_and_a_secret_never_is() -> None:
    environ = {
        "PATH": "/usr/bin",
        "SSL_CERT_FILE": "/etc/ssl/ca.pem",
        "REQUESTS_CA_BUNDLE": "/etc/ssl/ca.pem",
        "NODE_EXTRA_CA_CERTS": "/etc/ssl/extra.pem",
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": "/etc/ssl/ca.pem",
        "HTTPS_PROXY": "http://proxy.internal:3128",
        "no_proxy": "localhost,127.0.0.1",
        "LC_ALL": "de_DE.UTF-8",
        "XDG_CACHE_HOME": "/home/u/.cache",
        "UV_CACHE_DIR": "/home/u/.cache/uv",
        "npm_config_cache": "/home/u/.npm",
        "PIP_INDEX_URL": "https://pypi.internal/simple",
        "MYTOOL_HOME": "/opt/mytool",
        # secrets, whatever list their name is on
        "ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "UV_PUBLISH_TOKEN": "pypi-AgEIcHlwaS5vcmc",
        "npm_config__authToken": "npm_abcdefghijklmnop",
        "ALL_PROXY": "http://user:hunter2hunter2@proxy.internal:3128",
        "PIP_EXTRA_INDEX_URL": "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@x/simple",
        "MYTOOL_API_KEY": "k-123456789",
        "UNRELATED": "x",
    }
    env = child_env({"EXPLICIT": "1"}, ["MYTOOL_*"], environ)
    assert set(env) == {
        "PATH", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
        "HTTPS_PROXY", "no_proxy", "LC_ALL", "XDG_CACHE_HOME", "UV_CACHE_DIR", "npm_config_cache", "PIP_INDEX_URL",
        "MYTOOL_HOME", "EXPLICIT",
    }  # fmt: skip


def _suite(root: Path, servers: dict[str, object], passthrough: list[str]) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "env",
        "env_passthrough": passthrough,
        "mcpServers": servers,
        "arms": {"a": {"servers": list(servers)}},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    return root


@installed
@pytest.mark.slow
def test_a_real_server_receives_certificates_locale_caches_and_the_suites_names_not_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        "LC_ALL": "C.UTF-8",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "UV_CACHE_DIR": str(tmp_path / "uv"),
        "npm_config_cache": str(tmp_path / "npm"),
        "NO_PROXY": "127.0.0.1",
        "PROCTOR_I39_SETTING": "on",
        "PROCTOR_I39_API_KEY": "k-1234567890abcdef",
        "PROCTOR_I39_UNLISTED": "x",
    }.items():
        monkeypatch.setenv(name, value)
    suite = _suite(
        tmp_path / "suite",
        {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}},
        ["PROCTOR_I39_SET*", "PROCTOR_I39_API_KEY"],
    )
    assert main(["servers", "call", str(suite), "ev", "get-env", "--json"]) == 0
    out = capsys.readouterr()
    received = json.loads(json.loads(out.out)["result"]["content"])
    assert "field 'env_passthrough': 'PROCTOR_I39_API_KEY' looks like a secret" in out.err
    for name in (
        "SSL_CERT_FILE",
        "LC_ALL",
        "XDG_CONFIG_HOME",
        "UV_CACHE_DIR",
        "npm_config_cache",
        "NO_PROXY",
    ):
        assert received[name] == os.environ[name], name
    assert received["PROCTOR_I39_SETTING"] == "on"
    assert "PROCTOR_I39_API_KEY" not in received and "PROCTOR_I39_UNLISTED" not in received


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 (certificate signed by a CA made here) and that CA's bundle."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "proctor test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    bundle, cert, private = tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "leaf.key"
    bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"the page behind a private CA\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, private)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{server.server_address[1]}/page", bundle
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@installed
@pytest.mark.slow
def test_a_real_server_verifies_tls_with_the_users_certificate_bundle(
    https_server: tuple[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where a proxy or a company CA re-signs TLS, SSL_CERT_FILE is the user's bundle; uv, pip,
    # httpx and requests read it. Without it, mcp-server-fetch says "certificate verify failed".
    url, bundle = https_server
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    config = tmp_path / "mcp.json"
    entry = {"command": str(FETCH), "args": ["--ignore-robots-txt", "--allow-private-ips"]}
    config.write_text(json.dumps({"mcpServers": {"fetch": entry}}))
    code = main(
        [
            "servers",
            "call",
            str(config),
            "fetch",
            "fetch",
            "--args",
            json.dumps({"url": url, "raw": True}),
            "--json",
        ]
    )
    result = json.loads(capsys.readouterr().out)["result"]
    assert code == 0, result
    assert "the page behind a private CA" in result["content"]


@installed
@pytest.mark.slow
async def test_a_server_that_does_not_start_is_told_which_variables_it_did_not_get(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_SERVER_HOME", "/srv/git")
    monkeypatch.setenv("GIT_SERVER_TOKEN", "t-1234567890abcdef")
    cfg = StdioServer(command=str(GIT), args=["--repository", str(tmp_path / "nowhere")])
    conn = McpConnection("git", cfg, tmp_path / "logs")
    with pytest.raises(ServerStartError) as info:
        await conn.start()
    await conn.aclose()
    message = str(info.value)
    environment = message.split("[environment]", 1)[1]
    assert "does not exist" in message  # the server's own reason, from its stderr
    assert "GIT_SERVER_HOME" in environment.split("withheld", 1)[0]
    assert (
        "withheld as secret-looking: " in environment
        and "GIT_SERVER_TOKEN" in environment.split("withheld", 1)[1]
    )
    assert "t-1234567890abcdef" not in message and "env_passthrough" in environment
