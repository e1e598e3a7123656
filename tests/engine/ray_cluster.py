"""A real two-node Ray cluster on this machine, for the tests: ``ray start --head`` and a second
``ray start --address``, one CPU each, token auth on, every process in one temp folder.

Nodes are told apart by their node-manager port (in each raylet's command line and in proctor's
node names) and by a custom resource. Teardown kills, by pid, every process that names the
cluster's folder or runs in it: never ``ray stop``, which would stop other Ray clusters on the
machine too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from proctor.scenarios.workspace import free_port

RAY = str(Path(sys.executable).with_name("ray"))
START_TIMEOUT_S = 90


@dataclass
class Node:
    name: str
    manager_port: int
    env: dict[str, str]


@dataclass
class Cluster:
    root: Path
    port: int
    driver_env: dict[str, str]
    nodes: list[Node] = field(default_factory=list)
    client_port: int = 0

    def client_address(self) -> str:
        """``ray://HOST:PORT`` of the head's Ray Client server (it listens on the node's address,
        which its command line names)."""
        for _pid, cmdline in _processes():
            if "ray.util.client.server" in cmdline and f"--port={self.client_port} " in cmdline + " ":
                host = cmdline.split("--host=", 1)[1].split()[0]
                return f"ray://{host}:{self.client_port}"
        raise LookupError("the head serves no Ray Client")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start_node(
        self,
        name: str,
        *,
        head: bool = False,
        env: dict[str, str] | None = None,
        ray: Sequence[str] = (RAY,),
    ) -> Node:
        """``ray`` is the command that starts the node: its Python is the one the node's workers run."""
        manager = free_port()
        node_env = {**self.driver_env, **(env or {})}
        args = [*ray, "start", "--num-cpus", "1", "--resources", f'{{"{name}": 1}}', "--disable-usage-stats"]
        args += ["--node-manager-port", str(manager), "--object-manager-port", str(free_port())]
        if head:
            args += ["--head", "--port", str(self.port), "--include-dashboard=false"]
            self.client_port = free_port()
            args += ["--temp-dir", str(self.root / "ray"), "--ray-client-server-port", str(self.client_port)]
        else:
            args += ["--address", self.address]
        done = subprocess.run(
            args, cwd=self.root, env=node_env, capture_output=True, text=True, timeout=START_TIMEOUT_S
        )
        if done.returncode != 0:
            raise RuntimeError(f"ray start ({name}) failed:\n{done.stderr[-3000:]}")
        node = Node(name, manager, node_env)
        self.nodes.append(node)
        return node

    def raylet(self, node: Node) -> int:
        """The pid of ``node``'s raylet."""
        for pid, cmdline in _processes():
            if "raylet/raylet" in cmdline and f"--node_manager_port={node.manager_port}" in cmdline:
                return pid
        raise LookupError(f"no raylet for {node.name}")

    def leftovers(self, marker: str) -> list[str]:
        """Processes of this cluster's trials still alive: ``marker`` in their command line, run in
        the cluster's folder (a server inherits its worker's folder, and keeps it when orphaned)."""
        found = []
        for pid, cmdline in _processes():
            if marker in cmdline and _cwd(pid).startswith(str(self.root)):
                found.append(f"{pid}: {cmdline[:200]}")
        return found

    def client_server_logs(self, tail: int = 1500) -> str:
        """The end of each Ray Client server log on the head: why a ``ray://`` connection was
        refused is written there, not sent to the driver."""
        logs = sorted((self.root / "ray" / "session_latest" / "logs").glob("ray_client_server*.err"))
        return "".join(f"\n== {p.name}\n{p.read_text(errors='replace')[-tail:]}" for p in logs)

    def stop(self) -> None:
        for pid, cmdline in _processes():
            if pid != os.getpid() and (str(self.root) in cmdline or _cwd(pid).startswith(str(self.root))):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> Cluster:
    # Short: Ray's unix socket paths under --temp-dir must stay under 108 bytes.
    root = Path(tempfile.mkdtemp(prefix="pr-ray-", dir="/tmp"))
    token = root / "token"
    token.write_text(secrets.token_hex(32))
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "token",  # Ray 2.60 reads the token variables only with this beside them
        "RAY_AUTH_TOKEN_PATH": str(token),
        "PROCTOR_CACHE": str(root / "cache"),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    env.pop("RAY_ADDRESS", None)
    cluster = Cluster(root, free_port(), env)
    try:
        cluster.start_node("node_a", head=True)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _processes() -> list[tuple[int, str]]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out.append((int(entry.name), cmdline))
    return out


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""
