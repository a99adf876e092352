"""The live wiretap: mitmproxy in reverse mode in front of an API server, and its addons."""
