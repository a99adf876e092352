"""`audit-webhook --record` stopped by a signal, as it is meant to stop (SIGTERM from a
service manager, SIGINT from Ctrl-C): the recording ends with a note naming the signal,
and no reader takes it for a cut recording."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import iter_records
from tests.importers.test_webhook import start_receiver


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_a_signal_ends_the_recording_with_a_note_of_it(
    tmp_path: Path, signum: signal.Signals
) -> None:
    receiver = start_receiver(tmp_path / "receiver")
    receiver.process.send_signal(signum)
    assert receiver.process.wait(30) == 0, receiver.said()
    last = json.loads(receiver.record.read_bytes().splitlines()[-1])
    assert last["record"] == "note" and last["stopped"] == signum.name
    assert last["message"] == f"recording stopped by {signum.name}"
    warnings: list[str] = []
    assert [r["record"] for r in iter_records(receiver.record, warnings)] == ["header", "note"]
    assert warnings == []
