"""Explanations: decoded exchanges and object histories in, who did what and why out."""
