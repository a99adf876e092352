"""Explanations: a recording's exchanges in, who did what and why out.

`Analysis` (`analysis.py`) decodes the exchanges, keeps every object's history by
resourceVersion (`history.py`) and replays every PATCH on the object as it was before
(`patches.py`, with the patch metadata of `openapi.py`). `Explainer` (`explainer.py`) then
says who sent each exchange (`who.py`), what it is and why (`summaries.py`), what caused it
(`chains.py`), and an apply field by field (`apply_fields.py`); `stream.py` explains a
recording as it is read, in bounded memory.
"""
