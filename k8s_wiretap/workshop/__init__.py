"""Workshop material: the manifests the demo and the walkthroughs apply."""

from __future__ import annotations

from importlib import resources

__all__ = ["manifest"]


def manifest(name: str) -> str:
    """The text of `workshop/<name>.yaml`."""
    return resources.files(__package__).joinpath(f"{name}.yaml").read_text()
