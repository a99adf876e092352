"""The messages of a `channel.k8s.io` WebSocket (exec, attach), decoded stream by stream, as
apimachinery's pkg/util/remotecommand/constants.go and wsstream number them. The lab's
hollow node has no address, so the lab never upgrades one (tests/explain/
test_streams_lab.py shows what it does); these bytes are the protocol's own."""

from __future__ import annotations

import base64
import json

from k8s_wiretap.decode.remotecommand import ChannelMessage, decode_channel_message

V5 = "v5.channel.k8s.io"
# The Status the API server's stream translator writes on the error stream of a command that
# exits 3 (apiserver pkg/util/proxy/streamtranslator.go, codeExitToStatusError; a cause's
# Type is JSON's "reason").
EXIT_3 = {
    "metadata": {},
    "status": "Failure",
    "message": "command terminated with non-zero exit code: exit status 3",
    "reason": "NonZeroExitCode",
    "details": {"causes": [{"reason": "ExitCode", "message": "3"}]},
}


def test_each_stream_is_its_first_byte() -> None:
    said = [
        decode_channel_message(b"\x00ls\n", V5, True),
        decode_channel_message(b"\x01hello\n", V5, False),
        decode_channel_message(b"\x02oops\n", V5, False),
        decode_channel_message(b"\x03" + json.dumps(EXIT_3).encode(), V5, False),
        decode_channel_message(b'\x04{"Width":80,"Height":24}', V5, True),
        decode_channel_message(b"\xff\x00", V5, True),
    ]
    assert [m.to_json() for m in said] == [
        {"stream": "stdin", "from_client": True, "text": "ls\n"},
        {"stream": "stdout", "from_client": False, "text": "hello\n"},
        {"stream": "stderr", "from_client": False, "text": "oops\n"},
        {"stream": "error", "from_client": False, "document": EXIT_3},
        {"stream": "resize", "from_client": True, "document": {"Width": 80, "Height": 24}},
        {"stream": "close", "from_client": True, "closes": "stdin"},
    ]


def test_the_base64_protocols_send_the_digit_and_the_bytes_as_text() -> None:
    message = b"1" + base64.b64encode(b"hello\n")
    assert decode_channel_message(message, "v4.base64.channel.k8s.io", False) == ChannelMessage(
        "stdout", b"hello\n", False
    )


def test_what_cannot_be_read_says_why_and_keeps_the_bytes() -> None:
    empty = decode_channel_message(b"", V5, False)
    assert (empty.stream, empty.error) == ("", "an empty message names no stream")
    broken = decode_channel_message(b"\x03{not json", V5, False)
    assert broken.stream == "error" and broken.data == b"{not json"
    assert broken.error is not None and broken.error.startswith("not JSON: ")
    odd = decode_channel_message(b"x!!", "base64.channel.k8s.io", False)
    assert odd.error is not None and odd.error.startswith("not base64 channel data: ")
    assert decode_channel_message(b"\x07?", V5, False).stream == "channel 7"
