import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stitchlab.topology import (
    Device,
    DeviceTopology,
    DoesNotFitError,
    Link,
    ProfileError,
    Strategy,
    Switch,
    presets,
    simulate,
)
from stitchlab.topology import collectives as c
from stitchlab.topology.profile import LayerProfile, ModelProfile, ParamInfo

from .conftest import pair, tiny_profile, two_hosts

# tiny_profile: fc1 (weight 256x128 + bias: 132096 B, fwd 1 ms, bwd 2 ms),
#               fc2 (weight 10x256 + bias: 10280 B, fwd 0.5 ms, bwd 1 ms); batch 8
# pair(): two devices of 1 TFLOP/s joined by a 1 GB/s link of 10 µs
ALL = 132096 + 10280


def ring2(nbytes):  # ring all-reduce over 2 ranks on pair()
    return 2 * 1e-5 + nbytes * 1e-9


def test_one_bucket_after_backward(profile):
    res = simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8]))
    assert len(res.comm) == 1 and res.comm[0].nbytes == ALL
    assert res.step_time == pytest.approx(4.5e-3 + ring2(ALL))
    assert res.compute == {"d0": pytest.approx(4.5e-3), "d1": pytest.approx(4.5e-3)}
    assert res.exposed_comm == pytest.approx(ring2(ALL))


def test_buckets_overlap_backward_hand_computed(profile):
    res = simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8]), bucket_bytes=20000)
    # backward order: fc2 (10280 B, ready 2.5 ms), fc1.weight (131072 B), fc1.bias (1024 B),
    # both ready at 4.5 ms; the queue runs them one after the other
    assert [c.nbytes for c in res.comm] == [10280, 131072, 1024]
    assert [c.ready for c in res.comm] == pytest.approx([2.5e-3, 4.5e-3, 4.5e-3])
    assert res.comm[0].end == pytest.approx(2.5e-3 + ring2(10280))
    assert res.comm[1].start == pytest.approx(4.5e-3)
    assert res.step_time == pytest.approx(4.5e-3 + ring2(131072) + ring2(1024))


def test_explicit_buckets_are_used(profile):
    st = Strategy(["d0", "d1"], [8, 8], buckets=[["fc1.weight", "fc1.bias"]])
    res = simulate(pair(), profile, st)
    assert [(c.name, c.nbytes) for c in res.comm] == [("bucket1", 10280), ("bucket0", 132096)]
    assert res.step_time == pytest.approx(4.5e-3 + ring2(132096))


def test_no_overlap_waits_for_backward(profile):
    res = simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8]), bucket_bytes=20000,
                   overlap=False)
    assert res.comm[0].start == pytest.approx(4.5e-3)
    assert res.step_time == pytest.approx(4.5e-3 + ring2(10280) + ring2(131072) + ring2(1024))


def test_slow_device_sets_the_pace(profile):
    res = simulate(pair(flops=(1e12, 0.5e12)), profile, Strategy(["d0", "d1"], [8, 8]))
    assert res.compute == {"d0": pytest.approx(4.5e-3), "d1": pytest.approx(9e-3)}
    assert res.step_time == pytest.approx(9e-3 + ring2(ALL))


def test_uneven_batch_shares_scale_compute(profile):
    res = simulate(pair(), profile, Strategy(["d0", "d1"], [3, 1]), global_batch=32)
    # rank 0 gets 24 samples (3x the profile batch), rank 1 gets 8
    assert res.compute["d0"] == pytest.approx(13.5e-3)
    assert res.compute["d1"] == pytest.approx(4.5e-3)
    assert res.step_time == pytest.approx(13.5e-3 + ring2(ALL))


def test_optimizer_time_scales_with_speed():
    prof = tiny_profile(optimizer_time=1e-3)
    res = simulate(pair(flops=(1e12, 0.25e12)), prof, Strategy(["d0", "d1"], [8, 8]))
    assert res.step_time == pytest.approx(4 * 4.5e-3 + ring2(ALL) + 4e-3)


def test_memory_peak_and_oom(profile):
    static = ALL * 4  # weights, gradients, 2x Adam state
    peak = static + (8 * 256 * 4 + 8 * 10 * 4) + ALL  # + activations + fusion buffer
    res = simulate(pair(memory=10**7), profile, Strategy(["d0", "d1"], [8, 8]))
    assert res.memory_peak["d0"] == pytest.approx(peak) and not res.oom
    small = pair(memory=peak - 1)
    res = simulate(small, profile, Strategy(["d0", "d1"], [8, 8]))
    assert res.oom and res.oom_devices == ["d0", "d1"]
    with pytest.raises(DoesNotFitError, match=r"device 'd0' needs .* GiB at batch share 8"):
        simulate(small, profile, Strategy(["d0", "d1"], [8, 8]), on_oom="raise")


def test_profile_check_fits_names_device(profile):
    with pytest.raises(DoesNotFitError, match=r"model 'tiny' needs .* device 'd0' has"):
        profile.check_fits(pair(memory=1000))
    profile.check_fits(pair())


def test_sfb_gathers_factors_and_rebuilds(profile):
    st = Strategy(["d0", "d1"], [8, 8], schemes={"fc1": "sfb"})
    res = simulate(pair(), profile, st)
    gather = [c for c in res.comm if c.scheme == "sfb"][0]
    # each rank: X (8x128) and delta (8x256) float32 = 12288 bytes; 1 step of the ring
    assert gather.nbytes == 2 * 12288
    assert gather.duration == pytest.approx(1e-5 + 12288e-9)
    rebuild = 2 * 16 * 128 * 256 / 1e12  # X^T delta over both ranks' 16 rows
    assert res.step_time == pytest.approx(4.5e-3 + 1e-5 + 12288e-9 + rebuild)
    assert res.compute["d0"] == pytest.approx(4.5e-3 + rebuild)


def _with_embedding():
    emb = LayerProfile("emb", "embedding", [ParamInfo("emb.weight", (1000, 16))], 1e-4, 2e-4,
                       activation_bytes=8 * 16 * 4, num_embeddings=1000, embedding_dim=16,
                       grad_density=0.1)
    return tiny_profile([emb] + tiny_profile().layers)


def test_sparse_gathers_index_value_pairs():
    prof = _with_embedding()
    res = simulate(pair(), prof, Strategy(["d0", "d1"], [8, 8], schemes={"emb": "sparse"}))
    sparse = [c for c in res.comm if c.scheme == "sparse"][0]
    assert sparse.nbytes == pytest.approx(2 * 100 * (8 + 16 * 4))  # 100 rows per rank
    assert sparse.duration == pytest.approx(1e-5 + 7200e-9)


def test_hierarchical_uses_strategy_groups():
    topo = two_hosts(10e9)
    prof = tiny_profile(flops=1e12)
    st = Strategy(topo.ids, [8] * 4, groups=[[0, 1], [2, 3]], schemes={"fc1": "hierarchical",
                                                                        "fc2": "hierarchical"})
    res = simulate(topo, prof, st)
    want = c.hierarchical_allreduce(ALL, topo, [["A0", "A1"], ["B0", "B1"]])
    assert res.comm[0].duration == pytest.approx(want)


def test_bad_strategies_are_named(profile):
    with pytest.raises(ProfileError, match="unknown layer 'fc9'"):
        simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8], schemes={"fc9": "sfb"}))
    with pytest.raises(ProfileError, match="unknown parameter 'fc1.gamma'"):
        simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8], buckets=[["fc1.gamma"]]))
    with pytest.raises(ProfileError, match=r"bucket 0 mixes schemes \['allreduce', 'hierarch"):
        simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8], buckets=[
            ["fc1.weight", "fc2.weight"]], schemes={"fc2": "hierarchical"}))
    with pytest.raises(ValueError, match="unknown device 'd7'"):
        simulate(pair(), profile, Strategy(["d0", "d7"], [8, 8]))
    with pytest.raises(ProfileError, match="SFB applies to linear layers only"):
        simulate(pair(), _with_embedding(), Strategy(["d0", "d1"], [8, 8], schemes={"emb": "sfb"}))
    with pytest.raises(ProfileError, match="'sparse' applies to embeddings only"):
        simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8], schemes={"fc1": "sparse"}))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"devices": "d0", "batch_shares": [8]}, "Strategy.devices 'd0' must be a list of device ids"),
    ({"devices": ["d0", 1], "batch_shares": [8, 8]}, r"Strategy.devices holds 1 \(int\)"),
    ({"devices": ["d0"], "batch_shares": [None]}, r"batch_shares holds None \(NoneType\)"),
    ({"devices": ["d0"], "batch_shares": ["8"]}, r"batch_shares holds '8' \(str\)"),
    ({"devices": ["d0"], "batch_shares": [float("inf")]}, "batch share inf must be"),
    ({"devices": ["d0"], "batch_shares": [float("nan")]}, "batch share nan must be"),
    ({"devices": ["d0"], "batch_shares": [8], "groups": [0]}, r"Strategy.groups \[0\] must be"),
    ({"devices": ["d0"], "batch_shares": [8], "buckets": "fc1.weight"}, "Strategy.buckets 'fc1"),
    ({"devices": ["d0"], "batch_shares": [8], "buckets": [[1]]}, r"buckets holds 1 \(int\)"),
    ({"devices": ["d0"], "batch_shares": [8], "schemes": ["fc1"]}, r"Strategy.schemes \['fc1'\]"),
])
def test_strategies_of_the_wrong_shape_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Strategy(**kwargs)


@pytest.mark.parametrize(("data", "match"), [
    ([1], "a Strategy is a JSON object"),
    (5, "a Strategy is a JSON object"),
    ({"devices": ["d0"]}, r"missing the field\(s\) \['batch_shares'\]"),
])
def test_strategy_documents_of_the_wrong_shape_are_named(data, match):
    with pytest.raises(ValueError, match=match):
        Strategy.from_dict(data)


def test_deterministic(profile):
    topo = presets.get("hetero-4fast-4slow-eth")
    st = Strategy(topo.ids, [3, 3, 3, 3, 1, 1, 1, 1], schemes={"fc1": "sfb"})
    a = simulate(topo, profile, st, global_batch=64)
    b = simulate(topo, profile, st, global_batch=64)
    assert a == b


def test_timeline_spans(profile):
    res = simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8]))
    kinds = [(e.resource, e.kind) for e in res.timeline]
    assert ("d0", "forward") in kinds and ("comm", "allreduce") in kinds
    assert simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8]), timeline=False).timeline == []


def big_profile(n_layers=50):
    layers = [LayerProfile(f"l{i}", "linear", [ParamInfo(f"l{i}.weight", (2048, 2048)),
                                               ParamInfo(f"l{i}.bias", (2048,))],
                           1e-3, 2e-3, activation_bytes=2**23, in_features=2048,
                           out_features=2048, tokens=4096) for i in range(n_layers)]
    return ModelProfile("big", 32, "H100", 989e12, layers)


def test_fifty_layers_on_64_devices_is_fast():
    topo = presets.get("8x-dgx-h100-ib")
    prof = big_profile()
    st = Strategy(topo.ids, [32 + i % 3 for i in range(64)],
                  schemes={f"l{i}": "sfb" for i in range(0, 50, 7)})
    simulate(topo, prof, st)  # warm the route cache
    n = 20
    t = time.process_time()  # CPU time: other jobs on a busy CI machine do not count
    for i in range(n):
        simulate(topo, prof, st, timeline=False, bucket_bytes=2**20 * (20 + i))
    per_call = (time.process_time() - t) / n
    assert per_call < 0.02, f"simulate took {per_call * 1e3:.1f} ms per call"


def test_sfb_rebuild_runs_at_the_profiles_matmul_efficiency():
    prof = tiny_profile()
    for layer in prof.layers:  # the linear layers reached a quarter of the device's 1 TFLOP/s
        layer.forward_flops = 0.25 * 1e12 * layer.forward_time
    assert prof.matmul_efficiency() == pytest.approx(0.25)
    res = simulate(pair(), prof, Strategy(["d0", "d1"], [8, 8], schemes={"fc1": "sfb"}))
    rebuild = 2 * 16 * 128 * 256 / (0.25 * 1e12)
    assert res.compute["d0"] == pytest.approx(4.5e-3 + rebuild)


def test_cpu_devices_do_not_overlap_by_default(profile):
    from stitchlab.topology.discovery import cpu_topology

    topo = cpu_topology(2, flops=2e12, memory=2**34, bandwidth=1e9, latency=5e-6, host="h")
    st = Strategy(topo.ids, [8, 8])
    auto = simulate(topo, profile, st, bucket_bytes=20000)
    assert auto == simulate(topo, profile, st, bucket_bytes=20000, overlap=False)
    assert auto.comm[0].start == pytest.approx(4.5e-3)  # after backward
    assert simulate(topo, profile, st, bucket_bytes=20000, overlap=True).comm[0].start < 4.5e-3
    with pytest.raises(ValueError, match="overlap='sometimes'"):
        simulate(topo, profile, st, overlap="sometimes")


def test_frozen_parameters_are_not_exchanged():
    prof = tiny_profile()
    fc1 = prof.layer("fc1")
    fc1.params = [ParamInfo(p.name, p.shape, p.dtype, trainable=False) for p in fc1.params]
    res = simulate(pair(), prof, Strategy(["d0", "d1"], [8, 8]))
    assert [c.nbytes for c in res.comm] == [10280]
    assert res.memory_peak["d0"] == pytest.approx(ALL + 10280 * 3 + (8 * 256 * 4 + 8 * 10 * 4) + 10280)


@settings(max_examples=30, deadline=None)
@given(
    shares=st.lists(st.integers(0, 64), min_size=2, max_size=6).filter(lambda s: sum(s) > 0),
    bw=st.floats(1e8, 1e12),
    sfb=st.booleans(),
)
def test_step_bounds_and_slower_links_never_help(shares, bw, sfb):
    prof = tiny_profile()
    devs = [Device(f"g{i}", "gpu", 1e12 * (1 + i % 2), 2**34) for i in range(len(shares))]
    sw = [Switch("sw", "nvswitch")]
    fast = DeviceTopology(devs, [Link(d.id, "sw", bw, 1e-6, "nvswitch") for d in devs], sw)
    slow = DeviceTopology(devs, [Link(d.id, "sw", bw / 4, 1e-6, "nvswitch") for d in devs], sw)
    st_ = Strategy([d.id for d in devs], shares, schemes={"fc1": "sfb"} if sfb else {})
    a, b = simulate(fast, prof, st_), simulate(slow, prof, st_)
    assert a.step_time >= max(a.compute.values()) - 1e-12
    assert a.step_time >= max(c.end for c in a.comm) - 1e-12
    assert b.step_time >= a.step_time - 1e-12
    starts = [c.start for c in a.comm]
    assert starts == sorted(starts) and all(c.start >= c.ready for c in a.comm)


def test_simulate_names_arguments_of_the_wrong_type(profile):
    with pytest.raises(TypeError, match="simulate's topo must be a DeviceTopology, got NoneType"):
        simulate(None, profile, Strategy(["d0"], [8]))
    with pytest.raises(TypeError, match="simulate's strategy must be a Strategy, got dict"):
        simulate(pair(), profile, {"devices": ["d0"], "batch_shares": [8]})
