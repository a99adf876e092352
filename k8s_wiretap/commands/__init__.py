"""The subcommands of `k8s-wiretap`: the top layer, where every other stage is put together.

Each module exposes `register(subparsers)` (see `k8s_wiretap.cli`). Nothing below this
package imports it.
"""
