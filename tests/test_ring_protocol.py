"""The ring kernel's tools. Its barrier protocol as modelled in tools/ring_protocol.py: the shipped
order never stalls; the order that hung on the H200 (the tail waiting for a buffer whose main reader
waited for the tail's scores) is found by the same search. tools/diag_ring.py's cuts still apply."""

import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def _model():
    sys.path.insert(0, str(TOOLS))
    try:
        import ring_protocol
    finally:
        sys.path.remove(str(TOOLS))
    return ring_protocol


def test_shipped_order_never_stalls():
    assert _model().search("shipped", max_tiles=8) == []  # gathers complete their barriers themselves
    assert _model().search("announce", max_tiles=8) == []  # async_gather=False: the tail announces them


def test_the_order_that_hung_on_the_h200_is_found():
    bad = _model().search("v4", max_tiles=4)
    assert (3, 0, False) in bad and (3, 3, True) not in bad  # with a gathered tile; TMA tiles alone run


def test_diag_ring_cuts_still_match_the_kernel():
    """tools/diag_ring.py removes parts of the ring kernel by text: each cut must still be there once."""
    sys.path.insert(0, str(TOOLS))
    try:
        import diag_ring
    finally:
        sys.path.remove(str(TOOLS))
    for name, cuts in diag_ring.CUTS.items():
        for old, _ in cuts:
            assert diag_ring.SRC.count(old) == 1, name
