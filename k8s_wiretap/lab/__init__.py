"""`k8s-wiretap lab`: a real Kubernetes control plane on 127.0.0.1, without containers."""

from __future__ import annotations

from k8s_wiretap.lab.lab import Lab, LabError, LabRunningError, UpOptions, default_dir

__all__ = ["Lab", "LabError", "LabRunningError", "UpOptions", "default_dir"]
