"""A hostile HTTP endpoint on 127.0.0.1: every request gets a 200 whose body never ends.

``--shape sse`` sends an event stream that is one endless ``data:`` line; ``--shape json`` an
``application/json`` body that never closes; ``--shape gzip`` a small gzip body that inflates
to 256 MiB. It writes until the client hangs up. Run it as
``python tests/fakes/endless_http_server.py --shape sse``; it prints its port on the first line.
Plain sockets, no framework: it can send what no well-behaved server would.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import zlib

CHUNK = b"A" * 65536
HEADERS = {
    "sse": b"Content-Type: text/event-stream\r\n",
    "json": b"Content-Type: application/json\r\n",
    "gzip": b"Content-Type: application/json\r\nContent-Encoding: gzip\r\n",
}


def _serve(conn: socket.socket, shape: str) -> None:
    with conn:
        data = b""
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return
            data += more
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + HEADERS[shape] + b"Connection: close\r\n\r\n")
            if shape == "gzip":  # 256 MiB of JSON in about 256 KiB on the wire
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
                conn.sendall(packer.compress(b"["))
                block = b"0," * (1024 * 1024)
                for _ in range(128):
                    conn.sendall(packer.compress(block))
                conn.sendall(packer.compress(b"0]") + packer.flush())
                return
            conn.sendall(b"data: " if shape == "sse" else b'{"choices": ["')
            while True:  # until the client hangs up
                conn.sendall(CHUNK)
        except OSError:
            return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", choices=sorted(HEADERS), default="sse")
    args = parser.parse_args()
    server = socket.create_server(("127.0.0.1", 0))
    print(server.getsockname()[1], flush=True)
    sys.stdout.close()
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve, args=(conn, args.shape), daemon=True).start()


if __name__ == "__main__":
    main()
