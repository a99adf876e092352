"""Byte-level formats of Kubernetes traffic; nothing here imports the rest of the project.

The one protobuf reader and writer (`protowire.py`) and the `k8s\\0` envelope
(`envelope.py`); watch stream framing (`framing.py`, with `cborseq.py` for where a CBOR
item ends); content-encoded streams inflated as they arrive (`inflate.py`); HTTP media types
(`media.py`); the one YAML reader and writer (`yamltext.py`); recorded text made safe for a
terminal, its control characters escaped (`controls.py`); a count and its noun in agreement
(`words.py`).
"""
