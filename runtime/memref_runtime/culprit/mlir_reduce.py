"""The wheel's mlir-reduce, run with this reduction's own check.

mlir-reduce calls an interestingness script with the candidate file last and reads its exit
status. Here the script is a few lines of Python (no imports but socket) that hands the file's
path to this process over a Unix socket and exits with the answer; this process runs the check
as for any other candidate (same key, same isolation, same cache of texts already tried).
"""

from __future__ import annotations

import os
import select
import socket
import stat
import subprocess
import sys
import tempfile

from . import edits
from .tools import tool

CLIENT = """\
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.argv[-1].encode())
s.shutdown(socket.SHUT_WR)
sys.exit(1 if s.recv(1) == b"1" else 0)
"""


def _write_client(folder: str) -> str:
    path = os.path.join(folder, "interesting.py")
    with open(path, "w") as f:
        f.write(f"#!{sys.executable} -IS\n{CLIENT}")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def _answer(connection: socket.socket, reducer) -> None:
    with connection:
        data = b""
        while chunk := connection.recv(4096):
            data += chunk
        with open(data.decode()) as f:
            text = f.read()
        valid = edits.verified(text)
        connection.sendall(b"1" if valid is not None and reducer.fails_alike(valid) else b"0")


def run_mlir_reduce(reducer) -> str | None:
    """mlir-reduce --reduction-tree on the reducer's module with its check; the module it ends
    with, or None when it failed or ran past the reducer's time limit."""
    with tempfile.TemporaryDirectory(prefix="memref_culprit_") as folder:
        source, out, address = (os.path.join(folder, n) for n in ("input.mlir", "reduced.mlir", "socket"))
        with open(source, "w") as f:
            f.write(reducer.text)
        client = _write_client(folder)
        strategy = f"--reduction-tree=traversal-mode=0 test={client} test-arg={address}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server, tempfile.TemporaryFile() as log:
            server.bind(address)
            server.listen()
            process = subprocess.Popen([tool("mlir-reduce"), source, strategy, "-o", out], stdout=log, stderr=log)
            try:
                while process.poll() is None:
                    if reducer.late():
                        return None
                    if select.select([server], [], [], 0.1)[0]:
                        _answer(server.accept()[0], reducer)
            finally:
                if process.poll() is None:
                    process.kill()
                process.wait()
            if process.returncode != 0 or not os.path.isfile(out):
                return None
        with open(out) as f:
            return f.read()
