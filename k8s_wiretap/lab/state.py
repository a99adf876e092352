"""The lab's state file (DIR/lab.json): what runs, on which ports, with which pids.

Written after every process start, so that an interrupted `lab up` can still be cleaned up by
`lab down`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k8s_wiretap.lab.processes import Process
from k8s_wiretap.lab.releases import DEBIAN_RELEASE

__all__ = ["FORMAT", "LabState"]

FORMAT = "k8s-wiretap-lab"
VERSION = 1


@dataclass
class LabState:
    components: tuple[str, ...]
    ports: dict[str, int]
    server: str
    kubeconfig: str
    processes: list[Process] = field(default_factory=list)
    recording: str | None = None  # with --via-proxy: where the wiretap records
    kube_version: str = str(DEBIAN_RELEASE)  # state files before versions were 1.20's
    cbor: bool = False  # `lab up --cbor`: the CBOR gates on (components.cbor_args)

    def running(self) -> list[Process]:
        return [p for p in self.processes if p.alive()]

    def stopped(self) -> list[Process]:
        return [p for p in self.processes if not p.alive()]

    def save(self, path: Path) -> None:
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "components": list(self.components),
            "ports": self.ports,
            "server": self.server,
            "kubeconfig": self.kubeconfig,
            "processes": [p.to_json() for p in self.processes],
            "recording": self.recording,
            "kube_version": self.kube_version,
            "cbor": self.cbor,
        }
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(temporary, path)

    @classmethod
    def load(cls, path: Path) -> LabState | None:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except ValueError as error:
            raise ValueError(f"{path}: not a lab state file ({error})") from error
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"{path}: not a lab state file of version {VERSION}")
        return cls(
            components=tuple(data["components"]),
            ports=data["ports"],
            server=data["server"],
            kubeconfig=data["kubeconfig"],
            processes=[Process.from_json(p) for p in data["processes"]],
            recording=data.get("recording"),
            kube_version=data.get("kube_version", str(DEBIAN_RELEASE)),
            cbor=bool(data.get("cbor", False)),
        )
