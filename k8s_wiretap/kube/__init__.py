"""Kubernetes knowledge, in one place and as data where it can be, and talking to a cluster.

- what an API server serves: resources, kinds, scopes and verbs (`resources.py`, from
  `data/discovery-*.json`), the protobuf schema of each release (`schema/`), defaulting and
  reset fields (`defaults.py`, `resetfields.py`), the scale subresource (`scale.py`);
- what a request means and what it is about: `requestinfo.py` (as the API server resolves
  it), `refs.py` (object identity), `media.py` (media and patch types), `reads.py` (etcd or
  the watch cache), `etcd.py` (keys);
- who talks: user agents (`agents.py`), the control plane's clients and what each watches
  and writes (`controllers.py`); fields with a meaning of their own (`fields.py`), where
  secrets travel (`sensitive.py`), quantities (`quantity.py`); the rules of what each
  exchange is and why (`data/explanations.yaml`, loaded by `explanations.py`, matched by
  k8s_wiretap.explain); releases (`release.py`), verbs (`verbs.py`), the data files
  (`datafiles.py`);
- talking to an API server: kubeconfig files (`kubeconfig.py`), the credentials a proxy adds
  upstream (`credentials.py`), a minimal HTTPS client (`client.py`).
"""
