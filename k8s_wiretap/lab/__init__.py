"""`k8s-wiretap lab`: a real Kubernetes control plane on 127.0.0.1, without containers.

`Lab` (`lab.py`) runs one: its components as data (`components.py`), folders and ports
(`layout.py`), certificates and kubeconfigs (`pki.py`), processes, readiness probes and
state file, and `--via-proxy` (`wiretap.py`). Below it, the releases a lab runs and their
binaries, found or built once into the cache (`binaries.py`, `build.py`: from Debian's source
package or from Go modules); beside it, the Kubernetes API sources and modules the schema
scripts and tests read (`apisource.py`, `apimodules.py`).
"""

from __future__ import annotations

from k8s_wiretap.lab.lab import Lab, LabError, LabRunningError, UpOptions, default_dir

__all__ = ["Lab", "LabError", "LabRunningError", "UpOptions", "default_dir"]
