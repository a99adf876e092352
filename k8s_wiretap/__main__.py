"""Allow `python -m k8s_wiretap`."""

from __future__ import annotations

from k8s_wiretap.cli import main

raise SystemExit(main())
