"""A recording that grows on screen: a live proxy's, `replay --follow`, a playback.

What the person sees: the list following its end while the cursor is on the last row,
the title counting the rows that came since it stopped (`F` follows again), and a
playback's clock and speed in the title (`p` pause, `.` step, `]` `[` faster, slower).
"""
