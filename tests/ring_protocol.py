"""A model of the ring kernel's barrier protocol (kernels/fast/ring.py): the two main
warpgroups and the tail one as coroutines that wait on and arrive at mbarriers in the kernel's order,
run round-robin until all finish or none can move (a deadlock), for every tile count and count of
TMA'd tiles up to a bound. Loads complete on their own: TMA'd tiles, and gathered ones too (the
shipped async_gather: cp.async.mbarrier.arrive); in `announce` (async_gather=False) the tail
announces a gathered tile one tile after issuing it.

    python -m tests.ring_protocol            # the shipped order: expect "no deadlock"
    python -m tests.ring_protocol announce   # the same with gathers announced by the tail
    python -m tests.ring_protocol v4         # the order that hung on the H200
    python -m tests.ring_protocol whole      # ring_whole: whole M blocks, the tail only loads
    python -m tests.ring_protocol stagger    # the seesaw kernel's staggered schedule (kernels/fast/stagger.py)
    python -m tests.ring_protocol stagger-ahead  # the same with scores_ahead (warpgroup 0 scores ahead)

Edit the model together with the kernel's waits and arrivals; it checks the order, not the kernel.
"""

from __future__ import annotations

import sys

PARTS = 4  # a tile's latent slices, a full barrier each


class Barrier:
    """An mbarrier: `count` arrivals complete a phase; wait(parity) passes once that phase is done."""

    def __init__(self, count: int):
        self.count, self.arrived, self.phase = count, 0, 0

    def arrive(self, n: int = 1) -> None:
        self.arrived += n
        assert self.arrived <= self.count, "more arrivals than the barrier's count"
        if self.arrived == self.count:
            self.arrived, self.phase = 0, self.phase + 1

    def done(self, parity: int) -> bool:
        return self.phase & 1 != parity


def stalls(live: list, barriers: list[Barrier]) -> bool:
    """Run the warpgroups' coroutines round-robin, each to its next wait that is not yet done, until all
    finish (False) or a whole round moves no one and no barrier (True: a deadlock)."""
    state = lambda: [(b.phase, b.arrived) for b in barriers]  # noqa: E731
    while live:
        before, n_live = state(), len(live)
        for g in list(live):
            try:
                next(g)
            except StopIteration:
                live.remove(g)
        if state() == before and len(live) == n_live:
            return True
    return False


def wait(bar: Barrier, parity: int):
    """A warpgroup's mbarrier.wait: yields (its turn passes) until the phase of `parity` is done."""
    while not bar.done(parity):
        yield


def deadlocks(n_tiles: int, n_full: int, paged: bool, variant: str = "shipped") -> bool:
    """Whether the protocol stalls for a split of `n_tiles` tiles whose first `n_full` are TMA'd
    (none when pages are smaller than a tile: `paged` False)."""
    full = [Barrier(1) for _ in range(2 * PARTS)]
    empty, ts = [Barrier(3), Barrier(3)], [Barrier(1), Barrier(1)]
    p_bar, sum_bar = Barrier(1), Barrier(2)
    gathered = lambda t: not paged or t >= n_full  # noqa: E731
    async_gather = variant in ("shipped", "whole")
    seen_ts = [0, 0]  # phases of ts[u] its one waiter (main warpgroup u) has passed

    def land(t, at_issue):  # a TMA'd tile's bytes complete its barriers, so do async gathers; else announced
        if (not gathered(t) or async_gather) == at_issue:
            for k in range(PARTS):
                full[t % 2 * PARTS + k].arrive()

    def main(w):
        for t in range(n_tiles):
            if t % 2 == w:  # score tile t, then P into its rope rows once the tail has scored them
                for k in range(PARTS):
                    yield from wait(full[t % 2 * PARTS + k], t // 2 & 1)
                yield from wait(ts[t % 2], t // 2 & 1)
                seen_ts[t % 2] += 1
                p_bar.arrive()
            else:
                yield from wait(p_bar, t & 1)
            empty[t % 2].arrive()  # after this warpgroup's P V of tile t
        if n_tiles:
            yield from wait(empty[(n_tiles - 1) % 2], (n_tiles - 1) // 2 & 1)
        sum_bar.arrive()
        yield from wait(sum_bar, 0)
        if n_tiles > w:
            last = w + (n_tiles - 1 - w) // 2 * 2
            yield from wait(empty[w], last // 2 & 1)

    def tail():
        for t in range(min(2, n_tiles)):
            land(t, True)
            land(t, False)
        for t in range(n_tiles):
            if variant != "whole":  # with rows of its own the tail scores the tile; else it only loads
                for k in range(PARTS):
                    yield from wait(full[t % 2 * PARTS + k], t // 2 & 1)
            # a phase of ts[u] completing before its waiter passed the one before would alias
            assert variant == "v4" or ts[t % 2].phase - seen_ts[t % 2] < 1, (
                "ts completed twice before its waiter saw it"
            )
            ts[t % 2].arrive()
            if 1 <= t < n_tiles - 1:
                land(t + 1, False)  # tile t + 1's gather, issued one tile ago (announce, v4)
            empty[t % 2].arrive()  # after its P V of tile t
            if t + 2 < n_tiles and (variant != "v4" or gathered(t + 2)):
                yield from wait(empty[t % 2], t // 2 & 1)
                land(t + 2, True)

    def main_v4(w):  # S of tile t before P V of tile t - 1; TMA reload by the main warpgroup
        if w == 0 and n_tiles:
            for k in range(PARTS):
                yield from wait(full[k], 0)
            yield from wait(ts[0], 0)
            p_bar.arrive()
            empty[0].arrive()
        for t in range(2 if w == 0 else 1, n_tiles, 2):
            for k in range(PARTS):
                yield from wait(full[t % 2 * PARTS + k], t // 2 & 1)
            yield from wait(p_bar, (t - 1) & 1)
            yield from wait(ts[t % 2], t // 2 & 1)
            p_bar.arrive()
            empty[(t - 1) % 2].arrive()
            if paged and t + 1 < n_full:
                yield from wait(empty[(t - 1) % 2], (t - 1) // 2 & 1)
                land(t + 1, True)
            empty[t % 2].arrive()
        if n_tiles and (n_tiles - 1) % 2 != w:
            yield from wait(p_bar, (n_tiles - 1) & 1)
            empty[(n_tiles - 1) % 2].arrive()

    live = ([main_v4(0), main_v4(1)] if variant == "v4" else [main(0), main(1)]) + [tail()]
    return stalls(live, full + empty + ts + [p_bar, sum_bar])


def stagger_deadlocks(n_tiles: int, n_full: int, paged: bool, ahead: bool = False) -> bool:
    """The same question for the seesaw kernel's staggered schedule (kernels/fast/stagger.py): two
    warpgroups, each loading halves of tiles into both buffers (a load lands at once: TMA, or a gather
    its own warpgroup waits for, which holds no one else up), max/P barriers between them; with `ahead`, warpgroup 0
    waits for the next tile's first half before it loads buffer 1's (scores_ahead). Also fails where a barrier would
    complete a phase before its waiter has passed the one before."""
    del n_full, paged  # (TMA or a gather: either way the loader's own business)
    full = [[Barrier(1) for _ in range(PARTS)] for _ in range(2)]
    max_bars, p_bars, sum_bar = [Barrier(1), Barrier(1)], [Barrier(1), Barrier(1)], Barrier(2)
    seen: dict[int, int] = {}  # id(barrier): phases its waiter has passed
    half = PARTS // 2
    n_pairs = -(-n_tiles // 2)
    last = 2 * n_pairs

    def arrive(bar):
        bar.arrive()
        assert bar.phase - seen.get(id(bar), 0) <= 1, "a barrier completed twice before its waiter saw it"

    def load(u, h):  # half h of the next tile into buffer u
        for k in range(h * half, h * half + half):
            arrive(full[u][k])

    def wait(bar, parity):
        while not bar.done(parity):
            yield
        seen[id(bar)] = seen.get(id(bar), 0) + 1

    def slices(u, j, lo, hi):  # the waits of slices lo..hi-1 (modulo PARTS) of pair j's tile in buffer u
        for i in range(lo, hi):
            yield from wait(full[u][i % PARTS], j & 1)

    def scores(u, j, first):
        yield from slices(u, j, first * half, first * half + PARTS)

    def wg(w):
        if n_pairs:
            load(w, 0)
            load(w, 1)
            yield from scores(w, 0, 0)
        for j in range(n_pairs):
            t = 2 * j + w
            if w == 0:
                arrive(max_bars[0])
                yield from wait(max_bars[1], j & 1)  # (its first P V in flight)
                arrive(p_bars[0])
                if t + 2 < last:
                    load(0, 0)
                yield from wait(p_bars[1], j & 1)
                if ahead and j + 1 < n_pairs:  # scores_ahead: the next tile's first half scored before this load
                    yield from slices(0, j + 1, 0, half)
                if t + 3 < last:
                    load(1, 0)
                if j + 1 < n_pairs:
                    yield from slices(0, j + 1, half, PARTS) if ahead else scores(0, j + 1, 0)
            else:
                yield from wait(max_bars[0], j & 1)
                arrive(max_bars[1])
                arrive(p_bars[1])
                yield from wait(p_bars[0], j & 1)
                if t + 2 < last:
                    load(1, 1)
                if t + 1 < last:
                    load(0, 1)
                if j + 1 < n_pairs:
                    yield from scores(1, j + 1, 1)
        sum_bar.arrive()
        while not sum_bar.done(0):
            yield

    return stalls([wg(0), wg(1)], [*full[0], *full[1], *max_bars, *p_bars, sum_bar])


def search(variant: str = "shipped", max_tiles: int = 8) -> list[tuple[int, int, bool]]:
    """Every (n_tiles, n_full, paged) up to max_tiles that deadlocks."""
    return [
        (n, f, paged)
        for n in range(max_tiles + 1)
        for f in range(n + 1)
        for paged in (True, False)
        if (
            stagger_deadlocks(n, f, paged, ahead=variant == "stagger-ahead")
            if variant.startswith("stagger")
            else deadlocks(n, f, paged, variant)
        )
    ]


if __name__ == "__main__":
    variant = sys.argv[1] if len(sys.argv) > 1 else "shipped"
    bad = search(variant)
    print(
        f"{variant}: "
        + (
            f"deadlocks at (n_tiles, n_full, paged) {bad[:6]} ... ({len(bad)} cases)"
            if bad
            else "no deadlock up to 8 tiles"
        )
    )
