"""Other tools' records as the wiretap's: the API server's audit log, HAR files, mitmproxy's
flow files. Like the proxy, an importer only produces records (`capture`'s format, redacted
as the proxy redacts); decoding and explaining them is the layers' above, unchanged."""
