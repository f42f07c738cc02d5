"""The ring kernel's barrier protocol as modelled in tests/ring_protocol.py: the shipped order never
stalls; the order that hung on the H200 (the tail waiting for a buffer whose main reader waited for
the tail's scores) is found by the same search."""

from tests import ring_protocol


def test_shipped_order_never_stalls():
    assert ring_protocol.search("shipped", max_tiles=8) == []  # gathers complete their barriers themselves
    assert ring_protocol.search("announce", max_tiles=8) == []  # async_gather=False: the tail announces them
    assert ring_protocol.search("whole", max_tiles=8) == []  # ring_whole: the tail only loads, posts ts at once
    assert ring_protocol.search("stagger", max_tiles=8) == []  # kernels/fast/stagger.py
    assert ring_protocol.search("stagger-ahead", max_tiles=8) == []  # with scores_ahead


def test_the_order_that_hung_on_the_h200_is_found():
    bad = ring_protocol.search("v4", max_tiles=4)
    assert (3, 0, False) in bad and (3, 3, True) not in bad  # with a gathered tile; TMA tiles alone run
