"""Byte-level formats of Kubernetes traffic: watch stream framing and protobuf wire format."""
