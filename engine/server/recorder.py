"""The recorder: a child process of `platform server` that owns durable delivery recording.

Why a process: recording a delivery (authentication, payload, three inserts, the commit) costs
more CPU than answering the request, and in one Python process the two compete for one core
(a writer thread and the event loop also hand the GIL back and forth per statement). The event
loop sends each loop iteration's submissions down a pipe as one frame; the recorder reads
everything that is waiting, records it in ONE transaction (group commit), and writes the
verdicts back only after the commit, so every 202 is in history (bench/webhooks.py).

Frames are a 4-byte big-endian length and a `marshal` payload (plain tuples, lists, str, bytes,
int, bool, None), written only by these two ends. Lifecycle: the recorder exits when its input
closes (the server stopped or was killed: what it had read is still committed first); if the
recorder dies, every request it had not answered gets 503 (the sender retries; de-duplication
makes that safe) and the next request starts a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import marshal
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.server.children import RESPAWN_PAUSE, Forked, child_setup, fork, spawn
from engine.server.ingest import REFUSED, Submission, Verdict
from engine.serverstore.store import now_us

log = logging.getLogger("platform.server")
_LENGTH = struct.Struct(">I")
MAX_BATCH = 512  # submissions per transaction
READY_TIMEOUT = 10.0  # seconds the server waits at start for a warm recorder
# Frames sent ahead of the recorder's answers (requests arriving meanwhile gather into the next frame,
# sent when one is answered). With the delivery journal a group's commit is one write and one fdatasync
# (~0.15 ms): two frames ahead overlap a commit with the next frame's trip (bench/webhooks.py, 10 alternated
# pairs: 2 ahead 0.88-1.12x of the same-protocol baseline, median 1.04x, against 0.88-1.05x, median 0.95x,
# for 1; 3 ahead no better than 2). Committing into the database (PostgreSQL, or the journal off) a batch
# costs ~0.4 ms whatever its size: one frame, fewer and larger batches (1: 12.0-12.3k/s; 2: 10.7-11.2k;
# 3: 11.2-11.5k).
IN_FLIGHT_JOURNAL = 2
IN_FLIGHT_COMMIT = 1


def frame(obj: Any) -> bytes:
    data = marshal.dumps(obj)
    return _LENGTH.pack(len(data)) + data



# -- the pipe protocol's records ----------------------------------------------------------------
# On the wire an item is a plain tuple (marshal takes no tuple subclasses); in code it is named:
# a request is (seq, *Submission), a reply is (seq, *Verdict).


def encode_request(seq: int, submission: Submission) -> tuple[Any, ...]:
    return (seq, *submission)


def decode_request(item: tuple[Any, ...]) -> tuple[int, Submission]:
    return item[0], Submission._make(item[1:])


def encode_reply(seq: int, verdict: Verdict) -> tuple[Any, ...]:
    return (seq, *verdict)


def decode_reply(item: tuple[Any, ...]) -> tuple[int, Verdict]:
    return item[0], Verdict._make(item[1:])

class _Frames:
    """Splits a byte stream into frames."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        self._buf += data
        out = []
        while len(self._buf) >= 4:
            (size,) = _LENGTH.unpack_from(self._buf)
            if len(self._buf) < 4 + size:
                break
            out.append(marshal.loads(bytes(self._buf[4 : 4 + size])))
            del self._buf[: 4 + size]
        return out


# --- the server's side ---------------------------------------------------------------------------


class _Replies(asyncio.Protocol):
    def __init__(self, owner: RecorderClient) -> None:
        self.owner = owner
        self.frames = _Frames()
        self.ready = asyncio.Event()  # the recorder's first frame (it is warm), or its end

    def data_received(self, data: bytes) -> None:
        self.ready.set()
        for replies in self.frames.feed(data):
            self.owner._answered(replies)

    def connection_lost(self, exc: Exception | None) -> None:
        self.ready.set()
        self.owner._lost(self)


class RecorderClient:
    """Submits requests to the recorder child and awaits their verdicts (on the event loop)."""

    def __init__(
        self,
        database_url: str,
        data_dir: Path,
        on_enqueued: Callable[[], None] | None = None,
        window: int = IN_FLIGHT_COMMIT,
    ) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        self.on_enqueued = on_enqueued or (lambda: None)
        self.window = window  # frames sent ahead of the answers: IN_FLIGHT_JOURNAL or IN_FLIGHT_COMMIT
        self._proc: subprocess.Popen[bytes] | Forked | None = None
        self._forked: Forked | None = None  # forked at the server's start (prefork), taken by the first start()
        self._writer: asyncio.WriteTransport | None = None
        self._replies: _Replies | None = None
        self._waiting: dict[int, asyncio.Future[Verdict]] = {}
        self._pending: list[tuple[Any, ...]] = []
        self._seq = 0
        self._in_flight = 0  # frames sent and not yet answered
        self._scheduled = False
        self._started_at = 0.0
        self._starting: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def prefork(self) -> None:
        """Fork the recorder now (the server has no thread and no store connection yet); start() takes it."""
        data_dir = self.data_dir
        self._forked = fork("engine.server.recorder", lambda: run(data_dir), self.database_url, str(data_dir),
                            reply_pipe=True)

    async def start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._in_flight = 0
        self._started_at = time.monotonic()
        proc: subprocess.Popen[bytes] | Forked | None = self._forked
        self._forked = None
        if proc is None:
            proc = spawn("engine.server.recorder", self.database_url, str(self.data_dir), reply_pipe=True)
        assert proc.stdin is not None and proc.stdout is not None
        self._proc = proc
        self._writer, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, proc.stdin)
        _, protocol = await loop.connect_read_pipe(lambda: _Replies(self), proc.stdout)
        self._replies = protocol
        # Serve once the recorder is warm (connection open, triggers parsed, key log read): the
        # first requests would otherwise wait out its start-up in the pipe.
        try:
            await asyncio.wait_for(protocol.ready.wait(), READY_TIMEOUT)
        except TimeoutError:
            log.warning("delivery recorder not ready after %gs; requests wait for it", READY_TIMEOUT)

    async def stop(self, timeout: float = 30.0) -> None:
        """Close the recorder's input (after what is buffered was written); it commits what it
        read, answers, and exits."""
        if self._writer is not None:
            self._writer.close()
        proc = self._proc
        if proc is not None:
            deadline = time.monotonic() + timeout
            while proc.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._fail_all()

    async def submit(
        self,
        trigger_id: str,
        path_token: str | None,
        bearer: str | None,
        body: bytes,
        headers: list[tuple[str, str]],
        query: list[tuple[str, str]],
        content_type: str,
        too_large: bool,
    ) -> Verdict:
        if self._writer is None or self._writer.is_closing():
            if not await self._restart():
                return REFUSED
        # The loop start() ran on (asyncio.get_running_loop() is a getpid() system call per request).
        loop = self._loop
        assert loop is not None
        self._seq += 1
        seq = self._seq
        future: asyncio.Future[Verdict] = loop.create_future()
        self._waiting[seq] = future
        self._pending.append(encode_request(seq, Submission(
            trigger_id, path_token, bearer, body, headers, query, content_type, too_large, now_us())))
        if not self._scheduled and self._in_flight < self.window:
            # After this loop iteration: requests that arrived together travel as one frame.
            self._scheduled = True
            loop.call_soon(self._send)
        return await future

    def _send(self) -> None:
        self._scheduled = False
        if not self._pending or self._in_flight >= self.window:
            return  # what waits goes when the recorder answers a frame
        pending, self._pending = self._pending, []
        if self._writer is None or self._writer.is_closing():
            for item in pending:
                self._answer(decode_request(item)[0], REFUSED)
            return
        self._in_flight += 1
        self._writer.write(frame(pending))

    def _answered(self, reply: tuple[int, list[tuple[Any, ...]]]) -> None:
        covered, replies = reply
        self._in_flight = max(0, self._in_flight - covered)
        self._send()
        # An answer that covers no frame: the recorder is ready, or (journal) its indexer queued runs.
        queued = not covered
        for reply_item in replies:
            seq, verdict = decode_reply(reply_item)
            self._answer(seq, verdict)
            queued = queued or verdict.outcome == "queued"
        if queued:
            self.on_enqueued()

    def _answer(self, seq: int, verdict: Verdict) -> None:
        future = self._waiting.pop(seq, None)
        if future is not None and not future.done():
            future.set_result(verdict)

    def _lost(self, protocol: _Replies) -> None:
        if protocol is not self._replies:
            return
        if self._writer is not None:
            self._writer.close()
        self._fail_all()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        if self._proc is not None:
            code = self._proc.wait()
            if code != 0:
                log.warning("delivery recorder exited with %s; answering 503 until it is back", code)

    def _fail_all(self) -> None:
        """Requests the recorder never answered: not known to be recorded, so 503 (retry)."""
        for seq in list(self._waiting):
            self._answer(seq, REFUSED)
        self._pending = []
        self._in_flight = 0

    async def _restart(self) -> bool:
        if self._starting is None:
            if time.monotonic() - self._started_at < RESPAWN_PAUSE:
                return False
            self._starting = asyncio.ensure_future(self.start())
        starting = self._starting
        try:
            await asyncio.shield(starting)
        except Exception as exc:  # noqa: BLE001 - the request gets 503, the next one tries again
            log.warning("cannot start the delivery recorder: %s", exc)
            return False
        finally:
            if self._starting is starting and starting.done():
                self._starting = None
        return self._writer is not None and not self._writer.is_closing()


# --- the recorder process ------------------------------------------------------------------------


def _read_batch(fd: int, frames: _Frames) -> list[list[Any]] | None:
    """Block for the next frame, then take whatever else is already waiting (up to MAX_BATCH
    submissions). None once the server closed the pipe and nothing is left."""
    got: list[list[Any]] = []
    count = 0
    while not got or (count < MAX_BATCH and select.select([fd], [], [], 0)[0]):
        data = os.read(fd, 1 << 16)  # under malloc's mmap threshold: no map/unmap per read
        if not data:
            return got or None
        for item in frames.feed(data):
            got.append(item)
            count += len(item)
    return got


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def run(data_dir: Path) -> int:
    from engine.hooks.journal import catch_up, journal_dir
    from engine.hooks.secrets import SecretBox
    from engine.server import checkpoint
    from engine.server.ingest import BatchRecorder
    from engine.server.journaled import Indexer, JournalRecorder, journal_enabled
    from engine.serverstore import store

    # Losing the server (stop or SIGKILL) closes our input: we finish what we read, then exit.
    engine = store.open_engine(child_setup())
    box = SecretBox(data_dir)
    journaled = journal_enabled(engine)
    recorder = (
        JournalRecorder(engine, box, journal_dir(engine.url.database or ""))
        if journaled
        else BatchRecorder(engine, box)
    )
    if not journaled:
        try:  # a journal a run with it left: its keys count before this recorder decides
            catch_up(engine)
        except Exception as exc:  # noqa: BLE001 - reads index it too; the recorder still serves
            log.warning("delivery journal left unindexed: %s", str(exc).splitlines()[0])
    checkpointer = checkpoint.start_for(engine, recorder.gate)
    recorder.manual_checkpoints = checkpointer is not None
    recorder.warm()
    frames = _Frames()
    # Frames go to a private copy of stdout; anything a library prints goes to stderr instead of
    # into the frame stream. The indexer's thread writes too: one frame at a time.
    stdin, stdout = sys.stdin.fileno(), os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    out = threading.Lock()

    def send(data: bytes) -> None:
        with out, contextlib.suppress(BrokenPipeError):
            _write_all(stdout, data)

    def indexed(queued: int) -> None:
        if isinstance(recorder, JournalRecorder):
            recorder.indexed_lately = True  # the held keys can be let go cheaply now
        if checkpointer is not None:
            checkpointer.committed()
        if queued:
            send(frame((0, [])))  # runs are in the queue now: the server wakes the workers

    indexer = None
    if isinstance(recorder, JournalRecorder):
        journaling = recorder

        def writing() -> tuple[int, int] | None:
            writer = journaling.writer
            return None if writer is None else (writer.segment, writer.pos)

        indexer = Indexer(engine, recorder.directory, recorder.gate, indexed, recorder.manual_checkpoints, writing)
        indexer.start()
    gc.freeze()  # start-up objects are never collected: full collections stay short
    send(frame((0, [])))  # ready: an answer that covers no frame
    try:
        while (batch := _read_batch(stdin, frames)) is not None:
            requests = [decode_request(item) for group in batch for item in group]
            verdicts = recorder.record([submission for _, submission in requests])
            if indexer is not None:
                indexer.poke(sum(1 for verdict in verdicts if verdict.delivery_id))  # records appended
            elif checkpointer is not None:
                checkpointer.committed()
            replies = [encode_reply(seq, verdict) for (seq, _), verdict in zip(requests, verdicts, strict=True)]
            send(frame((len(batch), replies)))
    finally:
        if indexer is not None:
            indexer.stop()  # what the journal holds goes into SQLite before the exit
        if checkpointer is not None:
            checkpointer.stop()
        if isinstance(recorder, JournalRecorder):
            recorder.shut()
        else:
            recorder.close()
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
