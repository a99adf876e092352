"""The bottom line: what the list is filtered by and searched for, and the `:` commands.

What the person sees: the filter bar (the active filter in its language, on or off, the
noise switch, how many rows it lets through, how far a filter being checked has got),
the search and its place among the matches, and the command line (`:` and `s`) with
what its commands do: filter, search, save, copy, theme, chain, help.
"""
