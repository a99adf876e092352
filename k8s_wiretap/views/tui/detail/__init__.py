"""The detail: the selected exchange, below the list.

What the person sees: its tabs (Explain, Request, Response, Patch, Events) with what the
explanation layer says of it and its decoded bodies, a watch's event opened whole, and
the chain view (`c`): the causal tree it is part of, components as lanes.
"""
