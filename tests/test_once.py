"""`once`: worked out on first use, then an attribute read; on frozen dataclasses too."""

from __future__ import annotations

from dataclasses import dataclass, field

from k8s_wiretap.once import once


@dataclass(frozen=True)
class Counted:
    calls: list[int] = field(default_factory=list)

    @once
    def value(self) -> int:
        """Counts its calls."""
        self.calls.append(1)
        return len(self.calls) * 10


def test_the_value_is_worked_out_once_and_kept_in_the_instance() -> None:
    counted = Counted()
    assert (counted.value, counted.value) == (10, 10)
    assert counted.calls == [1]
    assert counted.__dict__["value"] == 10
    assert Counted().value == 10  # each instance its own


def test_the_class_gives_the_descriptor_with_its_doc() -> None:
    assert isinstance(Counted.__dict__["value"], once)
    assert Counted.value.__doc__ == "Counts its calls."
