"""Talking to a Kubernetes API server: kubeconfig files and a minimal HTTPS client."""
