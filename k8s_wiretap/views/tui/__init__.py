"""The Textual TUI over a recording (`k8s-wiretap replay FILE`): a Line-API exchange list
indexed by byte offsets, the selected exchange explained on demand, a filter language."""

from k8s_wiretap.views.tui.app import ReplayApp

__all__ = ["ReplayApp"]
