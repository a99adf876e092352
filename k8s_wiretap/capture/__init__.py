"""From proxy events to recordings, and from recordings to typed exchanges.

The events the proxy hands on (`events.py`, with who the client is: `identity.py`), the
recorder thread that turns them into records (`recorder.py`), redacted (`redact.py`), in the
recording format (`format.py`) and written by its outputs (`outputs.py`); then the reader
(`reader.py`) and the one `Assembler` (`assemble.py`) that turns records, read back or as
they are written, into typed `Exchange`s (`exchange.py`).
"""
