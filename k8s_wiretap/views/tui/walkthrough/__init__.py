"""The walkthrough: a recording told chapter by chapter, in a panel between the list and
the tabs.

What the person sees: each chapter's title and text (kept as data beside the recording),
its exchange found in the recording and selected in the list, and the explanation
layer's words on it; `→` `←` move along the steps.
"""
