"""Ways to show exchanges: text lines now; the TUI and JSON later."""
