"""Throwaway database and vector servers for tests, browser tests and benchmarks (all on 127.0.0.1).

PgCluster: Debian's PostgreSQL binaries (`apt-get install postgresql`), `initdb` into a temporary directory
and `pg_ctl start` on a free port (run as the `postgres` user when we are root: initdb refuses root).
ChromaServer: `chroma run` from the chromadb package in this virtualenv, on a free port and a temporary path.
Both raise ServerUnavailable with a sentence saying why, which the fixtures turn into a skip reason.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import psycopg

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"
CHROMA = Path(sys.executable).with_name("chroma")
HOST = "127.0.0.1"


class ServerUnavailable(RuntimeError):
    """The server cannot be started here; the message says why (used as the skip reason)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def pg_bin_dir() -> Path | None:
    """The newest PostgreSQL server binaries on this machine (Debian layout), else any on PATH."""
    found = sorted(
        glob.glob(PG_BIN_GLOB), key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0
    )
    if found and Path(found[-1], "initdb").exists():
        return Path(found[-1])
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


class PgCluster:
    """A PostgreSQL cluster of our own: `url(dbname)`, `create_database`, `drop_database`, `stop()`.

    Tests run it with fsync off (nothing to keep); `durable=True` (benchmarks) keeps PostgreSQL's defaults.
    """

    user = "katachi"

    def __init__(self, *, durable: bool = False) -> None:
        bin_dir = pg_bin_dir()
        if bin_dir is None:
            raise ServerUnavailable(
                "PostgreSQL server binaries not found (apt-get install postgresql): PostgreSQL tests skipped"
            )
        self.bin = bin_dir
        self.run_as: list[str] = []
        self.root = Path(tempfile.mkdtemp(prefix="katachi-pg-"))
        if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise ServerUnavailable(
                    "running as root and there is no postgres user to own a cluster"
                ) from exc
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self.run_as = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        self.data = self.root / "data"
        self._run(
            "initdb", "-D", str(self.data), "-U", self.user, "-A", "trust", "--locale=C.UTF-8", "-E", "UTF8"
        )
        options = f"-h {HOST} -p {self.port} -k {self.root} -c max_connections=300"
        if not durable:
            options += " -F -c synchronous_commit=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [*self.run_as, str(self.bin / program), *args], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise ServerUnavailable(f"{program} failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@{HOST}:{self.port}/{dbname}"

    def _admin(self) -> psycopg.Connection:
        return psycopg.connect(host=HOST, port=self.port, user=self.user, dbname="postgres", autocommit=True)

    def create_database(self, template: str | None = None, name: str | None = None) -> str:
        """A new empty database (or a copy of `template`); returns its name."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return name

    def drop_database(self, name: str) -> None:
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        subprocess.run(
            [*self.run_as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


class ChromaServer:
    """`chroma run` on a free port with a temporary path: `host`, `port`, `stop()`."""

    def __init__(self, path: Path | None = None) -> None:
        if not CHROMA.exists():
            raise ServerUnavailable(f"{CHROMA} not found (the chromadb package provides it)")
        self.path = Path(path or tempfile.mkdtemp(prefix="katachi-chroma-"))
        self.host, self.port = HOST, free_port()
        self.log = open(self.path / "chroma.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                str(CHROMA),
                "run",
                "--host",
                self.host,
                "--port",
                str(self.port),
                "--path",
                str(self.path / "db"),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://{self.host}:{self.port}/api/v2/heartbeat", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        self.stop()
        tail = (self.path / "chroma.log").read_text(errors="replace")[-500:]
        raise ServerUnavailable(f"chroma run did not start: {tail}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
