"""A real Redis server for the tests, from Debian's binary (``redis-server``).

One server per test that asks for ``redis_server``: on a free port of 127.0.0.1, in a
temporary folder, without persistence (``--save ''``, ``--appendonly no``), stopped at the
end. :meth:`RedisServer.restart` kills it (SIGKILL) and starts a new one on the same port.
Where the binary is missing the tests that need it are skipped, saying so.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import free_port


class RedisServer:
    def __init__(self, binary: str, folder: Path) -> None:
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.folder / "redis.log", "ab")
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder), "--daemonize", "no"],
            stdout=log, stderr=log)
        deadline = time.time() + 20
        while time.time() < deadline:
            assert self.proc.poll() is None, (self.folder / "redis.log").read_text()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self) -> None:
        self.kill9()
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    binary = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    if binary is None:
        pytest.skip("Redis is not installed (apt-get install redis-server): no redis-server")
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(binary, folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
