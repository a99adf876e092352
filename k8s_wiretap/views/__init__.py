"""Ways to show Kubernetes traffic: each consumes what the stages below make, none parses HTTP.

- `lines.py`: one line per exchange (`explain --format lines`, and what `console.py` prints
  as traffic passes: `proxy --no-tui`);
- `json.py`: one JSON object per exchange (`explain --format json`);
- `story.py`: what each user action set off, in words or markdown (`explain`, `demo`), and
  what the TUI shares with it (a colour per component, a replay's verdict);
- `tui/`: the Textual app (`replay`, `walkthrough`, `serve`, and `proxy` on a terminal);
- `kubetext.py`: one body or watch stream as redacted JSON text, which `contentview.py`
  shows in mitmproxy, mitmweb and mitmdump (`k8s-wiretap addon --path contentview`).
"""
