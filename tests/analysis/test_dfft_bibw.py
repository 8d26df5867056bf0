"""The dfft table's transpose / bibw: the slowest rank's transpose rate both ways over the bibw of
ranks 0-1 in the same file, at the transpose's message to each peer (as tests/bench/dfft_bench.sh)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from analysis import derive
from analysis.read.runs import TransferTest


def bibw_test(sizes, bw_Bps, pairs=((0, 1),)):
    sizes = np.asarray(sizes, dtype=np.int64)
    bw = np.asarray(bw_Bps, dtype=float).reshape(len(sizes), -1)
    return TransferTest(name="bibw", attrs={"kind": "p2p"}, bytes=sizes, t=None,
                        t_med=2 * sizes[:, None] / bw, bandwidth=bw, pairs=np.asarray(pairs), orders=None)


def point(rate_Bps, sent_bytes):
    return SimpleNamespace(attrs={"transpose_Bps_min": rate_Bps}, bytes_transposed=np.asarray(sent_bytes))


def test_the_transpose_is_set_against_the_bibw_at_its_message_per_peer():
    # 4 ranks, 6 MiB sent by the busiest: 1 MiB to each of 3 peers; bibw at 1 MiB is 200 MB/s.
    run = SimpleNamespace(nranks=4, transfer={"bibw": bibw_test([65536, 1 << 20, 4 << 20], [50e6, 200e6, 210e6])})
    over, bibw = derive.transpose_over_bibw(run, point(80e6, [6 << 20, 5 << 20, 6 << 20, 4 << 20]), 4)
    assert bibw == 200e6 and math.isclose(over, 2 * 80e6 / 200e6)


def test_the_pair_0_1_is_taken_and_a_far_size_is_no_figure():
    run = SimpleNamespace(nranks=3, transfer={"bibw": bibw_test([1 << 20], [[90e6, 120e6]], pairs=((0, 2), (1, 0)))})
    over, bibw = derive.transpose_over_bibw(run, point(30e6, [4 << 20]), 3)
    assert bibw == 120e6 and math.isclose(over, 0.5)
    # The message is 16 KiB per peer, 64x below the only bibw size: not comparable.
    assert all(math.isnan(v) for v in derive.transpose_over_bibw(run, point(30e6, [64 << 10]), 3))
    # No bibw in the file, or one rank: no figure.
    alone = SimpleNamespace(nranks=2, transfer={})
    assert all(math.isnan(v) for v in derive.transpose_over_bibw(alone, point(30e6, [1 << 20]), 2))
    assert all(math.isnan(v) for v in derive.transpose_over_bibw(run, point(30e6, [1 << 20]), 1))


def dfft_point(rate_Bps, sent_bytes, nranks):
    t = {"t_total": np.full((3, nranks), 0.1)}
    return SimpleNamespace(id="p000", times=t, verify={"passed": 1}, bytes_transposed=np.asarray(sent_bytes),
                           attrs={"transpose_Bps_min": rate_Bps, "n": 4096.0, "kind": "c2c", "shape": "16x16x16"})


def test_the_table_says_when_its_bibw_kept_more_than_one_message_in_flight():
    from analysis.find.tables.runs import dfft_points

    def note(window):
        test = bibw_test([1 << 20], [200e6])
        test.attrs["window"] = np.int32(window)
        run = SimpleNamespace(name="run", nranks=2, transfer={"bibw": test})
        d = derive.dfft_stats(run, dfft_point(80e6, [2 << 20, 2 << 20], 2), 1)
        assert math.isclose(d.over_bibw, 0.8) and d.bibw_window == window
        return dfft_points([d]).note

    assert "64 messages in flight" in note(64) and "--window 1" in note(64)
    assert "in flight" not in note(1)


def test_the_table_names_the_bibw_rule_of_the_file():
    from analysis.find.tables.runs import dfft_points
    from analysis.find.tables.transfer import transfer_stats

    def notes(**attrs):
        test = bibw_test([1 << 20], [200e6])
        test.attrs.update(attrs)
        run = SimpleNamespace(name="run", nranks=2, transfer={"bibw": test})
        d = derive.dfft_stats(run, dfft_point(80e6, [2 << 20, 2 << 20], 2), 1)
        ts = derive.TransferStats(run=run, test="bibw", kind="p2p", bytes=np.asarray([1 << 20]),
                                  columns={}, unstable=np.asarray([False]))
        return dfft_points([d]).note, transfer_stats([ts], "transfer_p2p", "p2p").note

    for note in notes(send_buffers="fresh", validated=np.int64(0)):
        assert "fresh bytes" in note and "resent" not in note
    # Files from before the rule: what the build of the day did, with and without --validate.
    for note in notes(validated=np.int64(0)):
        assert "resent" in note and "never rewritten" in note
    for note in notes(validated=np.int64(1)):
        assert "resent" in note and "--validate" in note
