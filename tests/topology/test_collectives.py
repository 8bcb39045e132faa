import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stitchlab.topology import TopologyError, presets
from stitchlab.topology import collectives as c
from stitchlab.topology.collectives import AlphaBeta

from .conftest import two_hosts

A, B = 1e-5, 1e-9  # 10 µs per message, 1 GB/s


@pytest.mark.parametrize("p", [1, 2, 3, 8, 64])
def test_ring_allreduce_closed_form(p):
    n = 3e6
    assert c.ring_allreduce(n, p, alpha=A, beta=B) == pytest.approx(
        0 if p == 1 else 2 * (p - 1) * A + 2 * (p - 1) / p * n * B)
    assert c.reduce_scatter(n, p, alpha=A, beta=B) == pytest.approx(
        0 if p == 1 else (p - 1) * A + (p - 1) / p * n * B)


@pytest.mark.parametrize("p,levels", [(2, 1), (4, 2), (5, 3), (8, 3)])
def test_tree_allreduce_closed_form(p, levels):
    assert c.tree_allreduce(1e6, p, alpha=A, beta=B) == pytest.approx(2 * levels * (A + 1e6 * B))


def test_allgather_equal_sizes_closed_form():
    assert c.allgather([2e6] * 5, alpha=A, beta=B) == pytest.approx(4 * (A + 2e6 * B))


def test_allgather_uneven_hand_computed():
    # 3 ranks, sizes 1, 2, 3 MB; rank i sends at step k block (i-k+1) mod 3.
    # step 1: ends 1, 2, 3 ms (+α); step 2: rank0 sends block 2 (3 ms) after max(1, 3) -> 6 ms ...
    got = c.allgather([1e6, 2e6, 3e6], alpha=0.0, beta=B)
    # step1 ends: e0=1, e1=2, e2=3 ; step2: r0 block2: max(e0,e2)+3=6, r1 block0: max(2,1)+1=3,
    # r2 block1: max(3,2)+2=5  -> 6 ms
    assert got == pytest.approx(6e-3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1.0, 1e7), min_size=2, max_size=20))
def test_allgather_uneven_uniform_links_is_largest_block_times_hops(sizes):
    p = len(sizes)
    got = c.allgather(sizes, alpha=A, beta=B)
    assert got == pytest.approx((p - 1) * (A + max(sizes) * B))


def test_hierarchical_closed_form():
    intra, inter = AlphaBeta(1e-6, 1e-11), AlphaBeta(1e-5, 1e-9)
    n, k, h = 8e6, 8, 4
    want = (2 * ((k - 1) * 1e-6 + (k - 1) / k * n * 1e-11)
            + 2 * (h - 1) * 1e-5 + 2 * (h - 1) / h * (n / k) * 1e-9)
    got = c.hierarchical_allreduce(n, 32, local_size=8, intra=intra, inter=inter)
    assert got == pytest.approx(want)


def test_closed_forms_need_alpha_beta():
    with pytest.raises(TopologyError, match="needs alpha= and beta="):
        c.ring_allreduce(1e6, 4)
    with pytest.raises(TopologyError, match="3 sizes"):
        c.allgather([1, 2, 3], 4, alpha=A, beta=B)


def test_ring_on_uniform_switch_equals_closed_form():
    topo = presets.get("dgx-h200")  # every path: 2 hops of 1 µs, 450 GB/s
    n = 1e8
    assert c.ring_allreduce(n, topo) == pytest.approx(
        c.ring_allreduce(n, 8, alpha=2e-6, beta=1 / 450e9))
    assert c.tree_allreduce(n, topo) == pytest.approx(
        c.tree_allreduce(n, 8, alpha=2e-6, beta=1 / 450e9))
    assert c.allgather([n] * 8, topo) == pytest.approx(7 * (2e-6 + n / 450e9))


def test_ring_order_that_crosses_the_network_card_twice_is_slower():
    topo = two_hosts(10e9)
    n = 1e9
    good = c.ring_allreduce(n, topo, ["A0", "A1", "B0", "B1"])
    bad = c.ring_allreduce(n, topo, ["A0", "B0", "A1", "B1"])
    assert good == pytest.approx(2 * 3 / 4 * n / 10e9)
    assert bad == pytest.approx(2 * 3 / 4 * n / 5e9)  # two flows per card direction


def test_bottleneck_link_sets_the_ring():
    topo = presets.get("2x-dgx-h100-ib")
    n = 1e9
    assert c.ring_allreduce(n, topo) == pytest.approx(2 * 15 * 5e-6 + 2 * 15 / 16 * n / 50e9)


def test_hierarchical_on_two_dgx_nodes():
    topo = presets.get("2x-dgx-h100-ib")
    n = 1e9
    inside = 2 * 7 * (2e-6 + n / 8 / 450e9)
    across = 2 * 1 * (5e-6 + n / 8 / 2 / 50e9)  # 8 rings in parallel, one IB card per GPU
    assert c.hierarchical_allreduce(n, topo) == pytest.approx(inside + across)
    assert c.hierarchical_allreduce(n, topo) < c.ring_allreduce(n, topo)


def test_hierarchical_shares_one_card_per_host():
    topo = presets.get("hetero-4fast-4slow-eth")
    n = 1e9
    # inside: the slow host's PCIe ring (25 GB/s, 2 hops of 1 µs) is the slower group
    inside = 2 * 3 * (2e-6 + n / 4 / 25e9)
    # across: 4 rings (one per local rank) share each host's one 12.5 GB/s card: 3.125 GB/s each;
    # path latency 1 + 10 + 10 + 1 + 1 µs
    across = 2 * 1 * (23e-6 + n / 4 / 2 / (12.5e9 / 4))
    assert c.hierarchical_allreduce(n, topo) == pytest.approx(inside + across)


def test_uneven_groups_use_leaders():
    topo = presets.get("dgx-h100")
    ids = topo.ids
    n, a, b = 1e8, 2e-6, 1 / 450e9
    got = c.hierarchical_allreduce(n, topo, [ids[:3], ids[3:]])
    # reduce to the leader of the slower (5-GPU) group by reduce-scatter + gather, and back
    inside = 2 * 4 * a + 2 * 4 / 5 * n * b
    across = 2 * 1 * a + 2 * 1 / 2 * n * b  # leaders gpu0 and gpu3 all-reduce the whole message
    assert got == pytest.approx(2 * inside + across)


def test_unknown_device_in_device_list():
    with pytest.raises(TopologyError, match="unknown device 'gpu9'"):
        c.ring_allreduce(1e6, presets.get("dgx-h200"), ["gpu0", "gpu9"])
