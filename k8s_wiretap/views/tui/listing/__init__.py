"""The list: one row per exchange, and the index of the recording behind it.

What the person sees at the top of the screen: the exchanges as rows (time, component in
its colour, verb, resource, namespace/name, status, duration, size, a watch's events,
summary), fitted to the terminal's width and drawn only as far as the screen shows them;
rows come as the file is read (or written: a followed recording) and their summaries
fill in as the explanation layer reaches them. Behind it: the index of the file by byte
offset, each row's facts kept as columns of arrays, and the selected exchange's window
of the recording, read back and explained for the tabs below.
"""
