"""Uploads spliced into the bulk side channel
(docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes: throughput; files written
atomically; bad input): a `files/write` with Content-Length at or above the bulk threshold goes from the
caller's socket to the daemon's bulk connection with splice(2); the file is byte-exact, the connection stays
usable for the next request, and a body cut short commits nothing."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import tempfile
import threading
from pathlib import Path

from engine.daemon.bulk import _receive
from tests.gateway_fixtures import Stack, stack  # noqa: F401
from tests.http_fixtures import responses
from tests.waiting import until

BLOCK = 1 << 20


def _head(stack: Stack, path: str, length: int) -> bytes:
    host = stack.srv.url.split("://", 1)[1]
    return (f"POST /api/daemons/dev/files/write?path={path} HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {stack.token}\r\nContent-Length: {length}\r\n\r\n").encode()


def _connect(stack: Stack) -> socket.socket:
    host, port = stack.srv.url.split("://", 1)[1].split(":")
    return socket.create_connection((host, int(port)), timeout=60)


def _response(sock: socket.socket) -> tuple[bytes, dict[str, object]]:
    """One whole response (head, JSON body) read from a keep-alive connection."""
    [(head, body)] = responses(sock, 1)
    return head, json.loads(body)


def _temps(stack: Stack) -> list[Path]:
    return [p for p in stack.work.iterdir() if p.name.endswith(".tmp")]


def _upload_works(stack: Stack, name: str) -> None:
    data = os.urandom(2 * BLOCK)
    r = stack.api("POST", "/dev/files/write", params={"path": name}, content=data)
    assert r.status_code == 200 and (stack.work / name).read_bytes() == data
    (stack.work / name).unlink()


def _sparse_random(path: Path, size: int) -> str:
    """A mostly sparse file with random 1 MiB blocks every 16 MiB and a random tail; its sha256."""
    with open(path, "wb") as fh:
        fh.truncate(size)
        for at in range(0, size - BLOCK, 16 * BLOCK):
            fh.seek(at)
            fh.write(os.urandom(BLOCK))
        fh.seek(size - 4097)
        fh.write(os.urandom(4097))
    return _sha(path)


def _sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(4 * BLOCK):
            digest.update(block)
    return digest.hexdigest()


def test_a_spliced_upload_is_byte_exact_and_the_connection_serves_the_next_request(stack: Stack,
                                                                                   tmp_path: Path) -> None:
    """A 300 MiB (+ odd bytes) upload with Content-Length, sent with sendfile on a raw keep-alive
    connection, lands byte-exact (sha256) and atomically; the next request on the SAME connection
    (a second, small write, then a second spliced one) parses and answers correctly."""
    source = tmp_path / "src.bin"
    size = (300 << 20) + 12345
    digest = _sparse_random(source, size)
    with _connect(stack) as sock, open(source, "rb") as fh:
        sock.sendall(_head(stack, "big.bin", size))
        assert sock.sendfile(fh) == size
        head, doc = _response(sock)
        assert head.startswith(b"HTTP/1.1 200"), (head, doc)
        assert doc["size"] == size
        small = b"hello after a spliced body\n"
        sock.sendall(_head(stack, "small.txt", len(small)) + small)
        head, doc = _response(sock)
        assert head.startswith(b"HTTP/1.1 200") and doc["size"] == len(small), (head, doc)
        again = os.urandom(3 * BLOCK + 1)
        sock.sendall(_head(stack, "again.bin", len(again)) + again)
        head, doc = _response(sock)
        assert head.startswith(b"HTTP/1.1 200") and doc["size"] == len(again), (head, doc)
    assert _sha(stack.work / "big.bin") == digest
    assert (stack.work / "small.txt").read_bytes() == small
    assert (stack.work / "again.bin").read_bytes() == again
    assert not _temps(stack)
    for name in ("big.bin", "small.txt", "again.bin"):
        (stack.work / name).unlink()


def test_a_spliced_body_cut_short_commits_nothing(stack: Stack) -> None:
    """A caller that declares 8 MiB, sends 3 MiB and half-closes: it gets a clear error naming the
    byte counts (exit code 2), the connection is closed after it, no file appears and the daemon's
    temp file is removed; the next upload works."""
    declared, given = 8 * BLOCK, 3 * BLOCK + 17
    with _connect(stack) as sock:
        sock.sendall(_head(stack, "short.bin", declared) + os.urandom(given))
        sock.shutdown(socket.SHUT_WR)
        head, doc = _response(sock)
        assert sock.recv(1) == b"", "the connection stays open after a body cut short"
    assert head.startswith(b"HTTP/1.1 400"), (head, doc)
    error = doc["error"]
    assert isinstance(error, dict) and doc["exit_code"] == 2
    assert error["message"] == f"the request body ended after {given} of {declared} bytes: nothing written"
    until(lambda: not _temps(stack), what="the temp file removed")
    assert not (stack.work / "short.bin").exists()
    _upload_works(stack, "after-short.bin")


def test_a_caller_hanging_up_mid_splice_cancels_the_write(stack: Stack) -> None:
    """A caller that hangs up (closes, reset) 5 MiB into a 64 MiB spliced upload: the write is
    cancelled -- no file, no temp file, no file session left on the daemon."""
    with _connect(stack) as sock:
        sock.sendall(_head(stack, "gone.bin", 64 * BLOCK) + os.urandom(5 * BLOCK))
        until(lambda: _temps(stack), what="the write to be running")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
    until(lambda: not _temps(stack), what="the temp file removed")
    until(lambda: not (stack.record().get("sessions") or {}).get("file"), what="no file session left")
    assert not (stack.work / "gone.bin").exists()


def test_the_daemon_receives_with_splice_and_falls_back_to_copies(tmp_path: Path) -> None:
    """The daemon's end of an upload (engine.daemon.bulk._receive): the bytes from the socket into
    the file until the half-close, whole (a tmpfs file: splice(2); a file on a block device goes
    direct, tests/test_daemon_upload_direct.py); a file that refuses splice(2) (O_APPEND: EINVAL)
    gets them by recv_into / write instead, equally whole."""
    data = os.urandom(5 * BLOCK + 333)
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else tmp_path) as memory:
        for where, flags in ((Path(memory), 0), (tmp_path, os.O_APPEND)):
            ours, theirs = socket.socketpair()
            target = where / f"recv-{flags}.bin"
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | flags, 0o600)
            sender = threading.Thread(target=lambda s=theirs: (s.sendall(data), s.shutdown(socket.SHUT_WR)))
            sender.start()
            try:
                assert _receive(ours, fd) == len(data)
            finally:
                os.close(fd)
                sender.join()
                theirs.close()
            assert target.read_bytes() == data


def test_a_stream_drop_fails_a_spliced_upload_clearly(stack: Stack) -> None:
    """The daemon stops answering (SIGSTOP) while a spliced upload waits for the rest of its body:
    after the heartbeat window the caller gets 502 `stream_lost` (and the connection is closed),
    nothing is committed, and, the daemon resumed, it reconnects, drops the temp file, and uploads
    work again."""
    pid, instance = stack.record()["pid"], stack.record()["instance_id"]
    with _connect(stack) as sock:
        sock.sendall(_head(stack, "dropped.bin", 64 * BLOCK) + os.urandom(5 * BLOCK))
        until(lambda: _temps(stack), what="the write to be running")
        os.kill(pid, signal.SIGSTOP)
        try:
            head, doc = _response(sock)
            assert sock.recv(1) == b""
        finally:
            os.kill(pid, signal.SIGCONT)
    assert head.startswith(b"HTTP/1.1 502"), (head, doc)
    assert isinstance(doc["error"], dict) and doc["error"]["code"] == "stream_lost"
    until(lambda: stack.record().get("state") == "connected"
          and [d["instance_id"] for d in stack.listed() if d["name"] == "dev"] == [instance],
          what="the daemon to reconnect")
    until(lambda: not _temps(stack), what="the temp file removed")
    assert not (stack.work / "dropped.bin").exists()
    _upload_works(stack, "after-drop.bin")


def test_a_large_upload_over_a_file_replaces_it_atomically_and_frees_it_after_the_answer(stack: Stack) -> None:
    """Writes commit atomically and leave no trace (docs/reference-daemon.md#execution-on-the-daemon-with-its-limits:
    temp file, fsync, rename): an upload over an existing large file answers with the new file in place,
    the old content survives under any other name it had, and the second name the daemon holds while
    answering (so freeing the old blocks is not part of the upload's time) is gone once the write is done;
    a small file is replaced without one."""
    target = stack.work / "over.bin"
    target.write_bytes(os.urandom(2 * BLOCK))
    elsewhere = stack.work / "other-name.bin"
    first = os.urandom(3 * BLOCK)
    r = stack.api("POST", "/dev/files/write", params={"path": "over.bin"}, content=first)
    assert r.status_code == 200 and r.json()["size"] == len(first)
    assert target.read_bytes() == first
    until(lambda: not [p for p in stack.work.iterdir() if p.name.endswith(".old")], timeout=30)
    os.link(target, elsewhere)  # a file with two names: the replaced one must live on under the other
    second = os.urandom(2 * BLOCK)
    r = stack.api("POST", "/dev/files/write", params={"path": "over.bin"}, content=second)
    assert r.status_code == 200 and target.read_bytes() == second and elsewhere.read_bytes() == first
    until(lambda: not [p for p in stack.work.iterdir() if p.name.endswith((".old", ".tmp"))], timeout=30)
    small = stack.work / "small.txt"
    small.write_bytes(b"old")
    r = stack.api("POST", "/dev/files/write", params={"path": "small.txt"}, content=b"new")
    assert r.status_code == 200 and small.read_bytes() == b"new"
    assert not [p for p in stack.work.iterdir() if p.name.endswith((".old", ".tmp"))]
    for path in (target, elsewhere, small):
        path.unlink()
