import pytest
from stitchlab.topology import collectives as c
from stitchlab.topology.calibrate import (
    cpu_topology_from_fit,
    fit_horovod_cycle,
    fit_ring_allreduce,
    measure_allreduce,
)


def test_fit_recovers_alpha_beta():
    for p in (2, 4):
        pts = [(n, c.ring_allreduce(n, p, alpha=3e-5, beta=2e-10)) for n in (1e3, 1e5, 1e7, 5e7)]
        ab = fit_ring_allreduce(pts, p)
        assert ab.alpha == pytest.approx(3e-5) and ab.beta == pytest.approx(2e-10)


def test_fit_needs_two_sizes():
    with pytest.raises(ValueError, match="two or more sizes"):
        fit_ring_allreduce([(1e6, 1e-3)], 2)


def test_topology_from_fit_reproduces_the_fit():
    ab = fit_ring_allreduce([(1e3, 1e-4), (1e7, 1e-2)], 2)
    topo = cpu_topology_from_fit(ab, 2, flops=1e10, memory=2**30)
    for n in (1e3, 1e7):
        assert c.ring_allreduce(n, topo) == pytest.approx(c.ring_allreduce(n, 2, alpha=ab.alpha, beta=ab.beta))


@pytest.mark.slow
def test_gloo_allreduce_measurement_fits_alpha_beta():
    pytest.importorskip("torch")
    pts = measure_allreduce(2, sizes=(4096, 2**20, 8 * 2**20), reps=3, timeout=120)
    assert [n for n, _ in pts] == [4096, 2**20, 8 * 2**20]
    ab = fit_ring_allreduce(pts, 2)
    assert ab.beta > 0 and 1e6 < ab.bandwidth < 1e12


def test_gpu_preset_calibrated_for_the_nccl_validation():
    from stitchlab.topology.collectives import AlphaBeta
    from stitchlab.topology.validation import _calibrated

    ab = AlphaBeta(2e-5, 1 / 300e9)
    topo = _calibrated("nccl", 2, ab, "h200-2gpu")
    assert c.ring_allreduce(1e8, topo) == pytest.approx(c.ring_allreduce(1e8, 2, alpha=2e-5, beta=1 / 300e9))
    with pytest.raises(ValueError, match="has 2 devices, need 4"):
        _calibrated("nccl", 4, ab, "h200-2gpu")


def test_validation_rejects_bad_backends():
    from stitchlab.topology.validation import validate

    with pytest.raises(ValueError, match="backend='mpi'"):
        validate(backend="mpi")


def test_horovod_over_nccl_needs_a_horovod_built_with_nccl():
    from stitchlab.topology.validation import validate

    hvd = pytest.importorskip("horovod.torch")
    if hvd.nccl_built():
        pytest.skip("this Horovod has NCCL")
    with pytest.raises(ValueError, match="needs a Horovod built with NCCL: STITCHLAB_HOROVOD_NCCL=1"):
        validate(backend="nccl", horovod=True)


@pytest.mark.parametrize(("measurements", "world_size", "match"), [
    ([(1024, 1e-4), (2**20, 1e-3)], 0, "world_size=0"),
    ([(1024, 1e-4), (2**20, 1e-3)], 1, "world_size=1"),
    ([(0, 0.0), (0, 0.0)], 2, r"measurement \(0, 0.0\) must be"),
    ([(1024, float("nan")), (2**20, 1e-3), (2**24, 1e-2)], 2, "measurement .*nan"),
    ([(1024, float("inf")), (2**20, 1e-3), (2**24, 1e-2)], 2, "measurement .*inf"),
    ([(1024, -1.0), (2**20, 1e-3), (2**24, 1e-2)], 2, r"measurement \(1024, -1.0\)"),
    ([("a", 1.0), (2**20, 1e-3)], 2, r"measurement \('a', 1.0\)"),
    (None, 2, "measurements must be a list"),
])
def test_fits_name_bad_measurements_instead_of_dividing_by_zero_or_fitting_nan(
        measurements, world_size, match):
    """Before: ZeroDivisionError (world size 0, zero times), a NaN fit (NaN/inf times), or a
    TypeError from the arithmetic."""
    for fit in (fit_ring_allreduce, fit_horovod_cycle):
        with pytest.raises(ValueError, match=match):
            fit(measurements, world_size)
