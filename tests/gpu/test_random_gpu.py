"""``sl.random`` in kernels on the GPU: the same bits as the numpy backend for one seed (uniform
floats of every dtype and integers: integer arithmetic and exact conversions; normals within a
few units of the host's libm, and so the closed-form distributions), draws fused into their use (dropout: one kernel, no random buffer),
and a draw large enough to need the kernels' 64-bit positions."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def _both(draw: object) -> tuple[np.ndarray, np.ndarray]:
    """``draw(rng)`` on the GPU and on the numpy backend, from generators of one seed."""
    gpu = draw(sl.random.default_rng(123)).get()
    previous = sl.get_backend()
    sl.set_backend("numpy")
    try:
        host = draw(sl.random.default_rng(123)).get()
    finally:
        sl.set_backend(previous)
    return gpu, host


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_uniform_floats_are_the_host_bits(dtype: str) -> None:
    gpu, host = _both(lambda r: r.random((1000, 777), dtype=dtype))
    assert gpu.dtype == host.dtype and str(gpu.dtype) == dtype
    np.testing.assert_array_equal(gpu.view(np.uint8), host.view(np.uint8))


@pytest.mark.parametrize("low, high, dtype", [(0, 1 << 64, "uint64"), (-5, 17, "int8"), (0, 1000, "int32"), (-(2**40), 2**40, "int64")])
def test_integers_are_the_host_values(low: int, high: int, dtype: str) -> None:
    gpu, host = _both(lambda r: r.integers(low, high, (333, 1001), dtype=dtype))
    np.testing.assert_array_equal(gpu, host)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_normals_are_the_host_values_within_a_few_units(dtype: str) -> None:
    """float64: Box-Muller in double precision; float32 and float16: in float32 (CUDA's and the
    host's float32 ``log``, ``log1p`` and ``cos`` differ by a unit or two, float16 rounds once)."""
    gpu, host = _both(lambda r: r.standard_normal(500_000, dtype=dtype))
    assert gpu.dtype == host.dtype
    eps = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(gpu, host, rtol=8 * eps, atol=8 * eps)
    assert abs(gpu.astype(np.float64).mean()) < 0.01 and abs(gpu.astype(np.float64).std() - 1) < 0.01


@pytest.mark.parametrize("draw", ["standard_exponential", "exponential", "gumbel", "laplace", "logistic"])
def test_inverse_transform_distributions_are_the_host_values_within_a_few_units(draw: str) -> None:
    gpu, host = _both(lambda r: getattr(r, draw)(size=200_000))
    assert gpu.dtype == host.dtype == np.float64
    eps = float(np.finfo(np.float64).eps)
    np.testing.assert_allclose(gpu, host, rtol=64 * eps, atol=64 * eps)  # CUDA's log, not the host's


@pytest.mark.parametrize(("draw", "args", "units"), [
    ("rayleigh", (2.0,), 64), ("weibull", (1.7,), 64), ("pareto", (3.0,), 64), ("power", (0.7,), 64),
    ("standard_cauchy", (), 64), ("triangular", (-1.0, 0.5, 3.0), 64), ("lognormal", (0.5, 0.75), 256),
    ("wald", (1.5, 2.0), 256),
])
def test_closed_form_distributions_are_the_host_values_within_a_few_units(draw: str, args: tuple, units: int) -> None:
    gpu, host = _both(lambda r: getattr(r, draw)(*args, size=200_000))
    assert gpu.dtype == host.dtype == np.float64
    eps = float(np.finfo(np.float64).eps)
    np.testing.assert_allclose(gpu, host, rtol=units * eps, atol=units * eps)  # CUDA's log, exp, tan, pow


@pytest.mark.parametrize("p", [0.001, 0.3, 1.0])
def test_geometric_counts_are_the_host_counts(p: float) -> None:
    """``ceil(e / -log1p(-p))``: CUDA's and the host's last bits differ, a count only where the
    quotient lies within a few units of an integer (about one draw in 10**13)."""
    gpu, host = _both(lambda r: r.geometric(p, size=(500, 401)))
    assert gpu.dtype == host.dtype == np.int64
    np.testing.assert_array_equal(gpu, host)


@pytest.mark.parametrize(("draw", "args"), [
    ("standard_gamma", (0.3,)), ("standard_gamma", (2.5,)), ("gamma", (1.0, 3.0)), ("beta", (0.5, 2.0)),
    ("chisquare", (3.0,)), ("standard_t", (4.0,)), ("f", (5.0, 7.0)), ("dirichlet", ([0.5, 1.0, 2.0],)),
    ("noncentral_chisquare", (3.0, 2.0)), ("noncentral_chisquare", (0.5, 1.5)), ("noncentral_f", (3.0, 20.0, 3.0)),
])
def test_gamma_family_is_the_host_values_within_rounding(draw: str, args: tuple) -> None:
    """Marsaglia and Tsang's rounds (all computed, the first accepted taken) on the GPU and on the
    numpy backend: the same rounds accepted, so the same values but for CUDA's last bits in log,
    cos, sin and pow (an acceptance that flips on them, about one draw in 10**14, would differ)."""
    gpu, host = _both(lambda r: getattr(r, draw)(*args, size=100_000))
    assert gpu.dtype == host.dtype == np.float64 and np.isfinite(gpu).all()
    np.testing.assert_allclose(gpu, host, rtol=1e-11, atol=1e-300)


def test_gamma_with_a_shape_per_element_is_the_host_values() -> None:
    """An array of shapes (0, below 1, above 1) broadcast along the rows: the loop op's ``d`` an
    input of the kernel, not a constant."""
    shapes = np.array([0.0, 0.3, 2.0, 50.0])
    gpu, host = _both(lambda r: r.standard_gamma(shapes, size=(30_000, 4)))
    np.testing.assert_allclose(gpu, host, rtol=1e-11, atol=1e-300)
    assert (gpu[:, 0] == 0).all() and np.allclose(gpu[:, 1:].mean(axis=0), shapes[1:], rtol=0.03)


def test_multivariate_normal_on_the_device() -> None:
    """Standard normals times the factor (a cuBLAS product) plus the mean: the host values within
    rounding, and the covariance asked for."""
    mean, cov = np.array([1.0, -2.0, 0.5]), np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.4], [0.0, -0.4, 0.5]])
    gpu, host = _both(lambda r: r.multivariate_normal(mean, cov, 100_000))
    np.testing.assert_allclose(gpu, host, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.cov(gpu.T), cov, atol=0.03)


@pytest.mark.parametrize(("draw", "args"), [
    ("poisson", (4.5,)), ("poisson", (3e9,)), ("binomial", (1000, 0.3)), ("hypergeometric", (50, 70, 40)), ("logseries", (0.9,)),
    ("negative_binomial", (2.5, 0.3)),
])
def test_table_draws_are_the_host_counts(draw: str, args: tuple) -> None:
    """The same table (computed on the host), the same uniform bits, CuPy's search: the same counts."""
    gpu, host = _both(lambda r: getattr(r, draw)(*args, size=(300, 701)))
    assert gpu.dtype == host.dtype == np.int64
    np.testing.assert_array_equal(gpu, host)


RATES = np.array([0.0, 0.02, 1.0, 4.5, 9.999, 10.0, 10.5, 37.0, 2500.0, 7.7e6, 3e15])


def test_poisson_with_a_rate_per_element_is_the_host_counts() -> None:
    """The search (rates below 10) and Hörmann's rounds (from 10) in the kernel's loop and in the
    numpy backend's reference: the same counts (a test that flips on CUDA's last bit of exp or
    log, about one draw in 10**14, would differ); a rate on the device NumPy would reject gives -1;
    the interpreter's unfused path (CuPy arrays through the host) gives the same counts."""
    from stitchlab import runtime
    from stitchlab.ir.graph import build_graph

    gpu, host = _both(lambda r: r.poisson(RATES, size=(40_000, RATES.size)))
    assert gpu.dtype == host.dtype == np.int64
    np.testing.assert_array_equal(gpu, host)
    np.testing.assert_allclose(gpu.mean(0), RATES, rtol=0.02, atol=0.01)
    bad = np.array([-1.0, np.nan, np.inf, 1e19, 5.0])
    import cupy as cp

    got = sl.random.default_rng(9).poisson(cp.asarray(bad), (3, 5)).get()
    np.testing.assert_array_equal(got[:, :4], -1)
    assert (got[:, 4] >= 0).all()
    draw = sl.random.default_rng(10).poisson(sl.asarray(RATES) * 1.0, (500, RATES.size))
    graph, sources = build_graph([draw._node])
    backend = runtime._instance("cupy")
    bufs = [src.value for src in sources]
    fused = backend.plan(graph)(bufs)[0].get()
    unfused = backend.plan_unfused(graph)(bufs)[0].get()
    np.testing.assert_array_equal(fused, unfused)


BINOMIAL_N = np.array([0, 1, 7, 19, 20, 20, 100, 1000, 10**6, 10**9, 5 * 10**5, 50, 10**12])
BINOMIAL_P = np.array([0.3, 0.5, 0.9, 0.5, 0.5, 0.51, 0.1, 0.3, 0.5, 0.01, 2e-5, 1.0, 0.7])


def test_binomial_with_parameters_per_element_is_the_host_counts() -> None:
    """The search (``n min(p, 1 - p) < 10``) and Hörmann's BTRS rounds in the kernel's loop and in
    the numpy backend's reference: the same counts; parameters on the device NumPy would reject
    give -1; the interpreter's unfused path gives the same counts."""
    import cupy as cp

    from stitchlab import runtime
    from stitchlab.ir.graph import build_graph

    gpu, host = _both(lambda r: r.binomial(BINOMIAL_N, BINOMIAL_P, size=(40_000, BINOMIAL_N.size)))
    assert gpu.dtype == host.dtype == np.int64
    np.testing.assert_array_equal(gpu, host)
    np.testing.assert_allclose(gpu.mean(0), BINOMIAL_N * BINOMIAL_P, rtol=0.02, atol=0.01)
    got = sl.random.default_rng(11).binomial(cp.asarray([-3, 5, 5, 5]), cp.asarray([0.5, -0.1, np.nan, 1.0]), (2, 4)).get()
    np.testing.assert_array_equal(got, [[-1, -1, -1, 5]] * 2)
    draw = sl.random.default_rng(12).binomial(sl.asarray(BINOMIAL_N), sl.asarray(BINOMIAL_P) * 1.0, (300, BINOMIAL_N.size))
    graph, sources = build_graph([draw._node])
    backend = runtime._instance("cupy")
    bufs = [src.value for src in sources]
    np.testing.assert_array_equal(backend.plan(graph)(bufs)[0].get(), backend.plan_unfused(graph)(bufs)[0].get())


def test_multinomial_is_the_host_counts() -> None:
    """Binomial counts category by category, in one kernel's chain on the GPU: the host's counts."""
    gpu, host = _both(lambda r: r.multinomial(np.array([10, 1000, 10**6]), [0.1, 0.2, 0.3, 0.4], (20_000, 3)))
    assert gpu.shape == (20_000, 3, 4) and gpu.dtype == np.int64
    np.testing.assert_array_equal(gpu, host)
    np.testing.assert_array_equal(gpu.sum(-1), np.broadcast_to([10, 1000, 10**6], (20_000, 3)))


def test_vonmises_is_the_host_angles_within_rounding() -> None:
    """Best and Fisher's rounds in the kernel's loop and in the reference: the same rounds accepted,
    so the same angles but for CUDA's last bits in cos, acos and log."""
    mu, kappa = np.array([0.0, 1.0, -3.0, 2.0, 0.5, 0.0]), np.array([0.0, 3e-6, 0.5, 4.0, 1e4, 1e7])
    gpu, host = _both(lambda r: r.vonmises(mu, kappa, (50_000, 6)))
    assert gpu.dtype == np.float64 and (np.abs(gpu) <= np.pi).all()
    np.testing.assert_allclose(gpu, host, rtol=1e-11, atol=1e-12)


def test_logseries_with_a_p_per_element_is_the_host_counts() -> None:
    """Kemp's method, a pointwise expression of two uniforms: the host's counts but where CUDA's
    last bit of log or expm1 moves a quotient across an integer (a few in a million at most)."""
    gpu, host = _both(lambda r: r.logseries(np.array([0.1, 0.5, 0.9, 0.999]), (100_000, 4)))
    assert gpu.dtype == np.int64 and (gpu >= 1).all()
    assert (gpu != host).mean() < 1e-5


def test_hypergeometric_with_parameters_per_element_is_the_host_counts() -> None:
    """The draws one by one and the HRUA rounds in the kernel and in the reference: the same counts
    (a test that flips on CUDA's last bit of log, far below one in a million, would differ)."""
    good = np.array([10, 5, 100, 50, 10**6, 20, 999, 5, 7, 10**8])
    bad = np.array([10, 50, 30, 70, 10**6, 20, 1, 10, 3, 10**6])
    sample = np.array([10, 12, 60, 40, 5000, 39, 500, 7, 10, 10**6])
    gpu, host = _both(lambda r: r.hypergeometric(good, bad, sample, (30_000, good.size)))
    assert gpu.dtype == np.int64
    np.testing.assert_array_equal(gpu, host)


def test_negative_binomial_and_noncentral_chisquare_per_element_are_the_host_values() -> None:
    """A Poisson count of a gamma draw per element (negative binomial) and a gamma draw of a Poisson
    count per element (noncentral chi-square with df <= 1 and a nonc per element)."""
    gpu, host = _both(lambda r: r.negative_binomial(np.array([0.4, 3.0, 25.0]), np.array([0.9, 0.3, 0.05]), (50_000, 3)))
    assert gpu.dtype == np.int64
    assert (gpu != host).mean() < 1e-4  # a gamma draw's last bits may move a count at its rounding
    gpu, host = _both(lambda r: r.noncentral_chisquare(np.array([0.5, 0.9]), np.array([1.0, 30.0]), (50_000, 2)))
    np.testing.assert_allclose(gpu, host, rtol=1e-11, atol=1e-300)


def test_permuted_is_the_host_order() -> None:
    """Keys from the stream, CuPy's argsort along the axis, a gather: the host's order."""
    rows = np.tile(np.arange(257, dtype=np.int32), (300, 1))
    gpu, host = _both(lambda r: r.permuted(rows, axis=1))
    np.testing.assert_array_equal(gpu, host)
    np.testing.assert_array_equal(np.sort(gpu, axis=1), rows)


def test_integers_between_array_bounds_are_the_host_values() -> None:
    low, high = np.array([-5, 0, -(2**40)]), np.array([17, 1000, 2**40])
    gpu, host = _both(lambda r: r.integers(low, high, (333, 3)))
    np.testing.assert_array_equal(gpu, host)
    assert (gpu >= low).all() and (gpu < high).all()


def test_dropout_is_one_kernel_and_keeps_the_expected_share() -> None:
    import cupy as cp

    x = sl.asarray(cp.ones((4096, 4096), cp.float32))
    p = 0.1
    y = x * (sl.random.default_rng(5).random(x.shape, np.float32) >= p) / (1 - p)
    plan = sl.explain(y)
    assert [k.schedule.family for k in plan.kernels] == ["pointwise"]
    v = y.get()
    assert abs((v == 0).mean() - p) < 0.002
    np.testing.assert_allclose(v[v != 0], np.float32(1 / (1 - p)), rtol=1e-6)


@pytest.mark.parametrize("method, n", [("random", 3 * 2**30), ("standard_normal", 2**32 + 1000)])
def test_a_draw_past_two_to_the_31_elements_continues_the_stream(method: str, n: int) -> None:
    """float16 draws of 6 and 8 GiB: positions past 2**31 in the kernel (uint32 positions for the
    uniforms; past 2**32 for the normals: uint64 positions); the last values are the ones a
    separate small draw of the tail gives."""
    import cupy as cp

    big = getattr(sl.random.default_rng(77), method)(n, dtype=np.float16)
    sliced = big[-1000:].get()  # the slice fused into the draw: 1000 values at the far positions
    (buf,) = sl.compute(big)  # the whole draw in one kernel
    whole = cp.asnumpy(buf[-1000:])
    del buf, big
    again = sl.random.default_rng(77)
    getattr(again, method)(n - 1000, dtype=np.float16)  # advances the stream without evaluating
    tail = getattr(again, method)(1000, dtype=np.float16).get()
    np.testing.assert_array_equal(whole.view(np.uint16), tail.view(np.uint16))
    np.testing.assert_array_equal(sliced.view(np.uint16), tail.view(np.uint16))


def test_a_jitted_dropout_continues_the_stream_at_every_replay() -> None:
    import cupy as cp

    rng = sl.random.default_rng(9)

    @sl.jit
    def dropout(x: sl.LazyArray) -> sl.LazyArray:
        return x * (rng.random(x.shape, np.float32) >= 0.3) / 0.7

    host = np.random.default_rng(1).standard_normal((512, 1024)).astype(np.float32)
    x = cp.asarray(host)
    calls = [cp.asnumpy(cp.asarray(dropout(x))) for _ in range(4)]  # traced once, then replayed
    assert len(dropout.traces) == 1 and len(dropout._replays) == 1
    previous = sl.get_backend()
    sl.set_backend("numpy")
    try:
        same_stream = sl.random.default_rng(9)
        for got in calls:
            want = (sl.asarray(host) * (same_stream.random(host.shape, np.float32) >= 0.3) / 0.7).get()
            np.testing.assert_array_equal(got == 0, want == 0)  # the same values dropped
            # the kept ones: kernels multiply by the reciprocal of a constant divisor (1 ulp apart)
            np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=0)
    finally:
        sl.set_backend(previous)


def test_a_draw_under_a_cuda_graph_capture_refuses() -> None:
    import cupy as cp

    rng = sl.random.default_rng(2)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match="under a CUDA-graph capture: the graph would replay the same numbers"):
                rng.random(10)
        finally:
            stream.end_capture()


def test_permutation_and_choice_are_the_host_values() -> None:
    """Sort and gather steps over the same keys: the same orderings and samples as the numpy
    backend (the weighted sample without replacement goes through log1p: checked for validity)."""
    host = np.arange(5000 * 3).reshape(5000, 3)
    for draw in (lambda r: r.permutation(100_000), lambda r: r.permutation(host),
                 lambda r: r.choice(1000, 20_000), lambda r: r.choice(4, 50_000, p=[0.1, 0.2, 0.3, 0.4]),
                 lambda r: r.choice(host, 300, replace=False)):
        gpu, cpu = _both(draw)
        np.testing.assert_array_equal(gpu, cpu)
    picked = sl.random.default_rng(3).choice(1000, 600, replace=False, p=np.full(1000, 1e-3)).get()
    assert len(set(picked.tolist())) == 600 and picked.min() >= 0 and picked.max() < 1000


def test_distribution_parameters_on_the_device() -> None:
    """CuPy arrays as ``loc``/``scale``/``low``: lazy operands (their values are not read back)."""
    import cupy as cp

    rng = sl.random.default_rng(4)
    n = rng.normal(cp.full(3, 5.0), cp.full(3, 1e-3), (100_000, 3)).get()
    assert n.shape == (100_000, 3) and abs(n.mean() - 5) < 1e-4
    u = rng.uniform(cp.asarray([0.0, 10.0]), 11.0, (50_000, 2)).get()
    assert u[:, 0].min() >= 0 and u[:, 1].min() >= 10 and u.max() < 11
