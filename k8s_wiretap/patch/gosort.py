"""Go's `sort.SliceStable`, step for step (insertion sort in blocks of 20, then SymMerge).

strategicpatch sorts list items with a comparison that is not a strict weak order (an item
missing from the reference order is "less" than everything, and everything is "less" than it),
so the result depends on the exact sequence of comparisons and swaps Go makes. This is that
sequence, unchanged from Go 1.15 to at least 1.22 (zsortfunc.go `stable_func`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["slice_stable"]

T = TypeVar("T")
Less = Callable[[int, int], bool]


def slice_stable[T](items: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort `items` in place exactly as `sort.SliceStable(items, less)` does."""

    def less_at(i: int, j: int) -> bool:
        return less(items[i], items[j])

    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]

    _stable(less_at, swap, len(items))


def _stable(less: Less, swap: Callable[[int, int], None], n: int) -> None:
    block = 20
    a, b = 0, block
    while b <= n:
        _insertion_sort(less, swap, a, b)
        a, b = b, b + block
    _insertion_sort(less, swap, a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            _sym_merge(less, swap, a, a + block, b)
            a, b = b, b + 2 * block
        m = a + block
        if m < n:
            _sym_merge(less, swap, a, m, n)
        block *= 2


def _insertion_sort(less: Less, swap: Callable[[int, int], None], a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less(j, j - 1):
            swap(j, j - 1)
            j -= 1


def _sym_merge(less: Less, swap: Callable[[int, int], None], a: int, m: int, b: int) -> None:
    if m - a == 1:
        i, j = m, b
        while i < j:
            h = (i + j) >> 1
            if less(h, a):
                i = h + 1
            else:
                j = h
        for k in range(a, i - 1):
            swap(k, k + 1)
        return
    if b - m == 1:
        i, j = a, m
        while i < j:
            h = (i + j) >> 1
            if not less(m, h):
                i = h + 1
            else:
                j = h
        for k in range(m, i, -1):
            swap(k, k - 1)
        return
    mid = (a + b) >> 1
    n = mid + m
    if m > mid:
        start, r = n - b, mid
    else:
        start, r = a, m
    p = n - 1
    while start < r:
        c = (start + r) >> 1
        if not less(p - c, c):
            start = c + 1
        else:
            r = c
    end = n - start
    if start < m < end:
        _rotate(swap, start, m, end)
    if a < start < mid:
        _sym_merge(less, swap, a, start, mid)
    if mid < end < b:
        _sym_merge(less, swap, mid, end, b)


def _rotate(swap: Callable[[int, int], None], a: int, m: int, b: int) -> None:
    i, j = m - a, b - m
    while i != j:
        if i > j:
            _swap_range(swap, m - i, m, j)
            i -= j
        else:
            _swap_range(swap, m - i, m + j - i, i)
            j -= i
    _swap_range(swap, m - i, m, i)


def _swap_range(swap: Callable[[int, int], None], a: int, b: int, n: int) -> None:
    for i in range(n):
        swap(a + i, b + i)
