"""A recording's records read and parsed in a second process, while this one works on them.

Reading a recording — its lines, gunzipped when it is gzip, each parsed as JSON — is a
fifth of `explain --format json`'s time, and needs nothing of what comes after it. With
two or more cores, `read_ahead(path, warnings)` gives the same records as
`reader.iter_records(path, warnings)`, in the same order, with the same warnings and the
same `RecordingError`s, but a child process does the reading: it sends batches of parsed
records down a pipe (pickled: unpickling costs this process 60% of parsing), at most one
batch ahead of what this process has taken, so memory stays bounded whatever the size.
On one core it is `iter_records` itself.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Generator, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import RecordingError, iter_records

__all__ = ["BATCH", "read_ahead"]

BATCH = 256  # records per message: a few megabytes of a typical recording


def read_ahead(path: Path | str, warnings: list[str]) -> Generator[dict[str, Any], None, None]:
    """`iter_records(path, warnings)`, read by a child process when there is a core for it."""
    if (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield from iter_records(path, warnings)
        return
    context = multiprocessing.get_context("fork")  # the modules are loaded: nothing to redo
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_read, args=(Path(path), sender), daemon=True)
    child.start()
    sender.close()
    try:
        yield from _received(receiver, warnings)
    finally:
        receiver.close()
        if child.is_alive():  # the consumer stopped early
            child.terminate()
        child.join()


def _received(receiver: Connection, warnings: list[str]) -> Iterator[dict[str, Any]]:
    while True:
        try:
            kind, payload = pickle.loads(receiver.recv_bytes())
        except EOFError:
            raise RecordingError("the recording's reader stopped unexpectedly") from None
        if kind == "records":
            yield from payload
        elif kind == "error":
            raise RecordingError(payload)
        else:  # "end": its warnings
            warnings.extend(payload)
            return


def _read(path: Path, sender: Connection) -> None:
    """In the child: every record, in batches; then the warnings, or the error."""
    warnings: list[str] = []
    batch: list[dict[str, Any]] = []
    try:
        for record in iter_records(path, warnings):
            batch.append(record)
            if len(batch) >= BATCH:
                sender.send_bytes(pickle.dumps(("records", batch), pickle.HIGHEST_PROTOCOL))
                batch = []
        if batch:
            sender.send_bytes(pickle.dumps(("records", batch), pickle.HIGHEST_PROTOCOL))
        sender.send_bytes(pickle.dumps(("end", warnings)))
    except RecordingError as error:
        if batch:
            sender.send_bytes(pickle.dumps(("records", batch), pickle.HIGHEST_PROTOCOL))
        sender.send_bytes(pickle.dumps(("error", str(error))))
    except BrokenPipeError:  # the parent stopped reading
        pass
    finally:
        sender.close()
