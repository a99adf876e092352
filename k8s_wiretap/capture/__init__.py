"""From proxy events to recordings: records, redaction, the recorder thread, the reader."""
