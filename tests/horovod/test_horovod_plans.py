"""Plans, errors and the notebook summary, in one process (Horovod with a single rank)."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from stitchlab.topology.strategy import Strategy  # noqa: E402
from torch import nn  # noqa: E402

try:
    import horovod.torch as hvd
except ImportError:
    pytest.skip(
        "Horovod is not installed: run `make install` or `bash scripts/install-horovod.sh "
        ".venv/bin/python`",
        allow_module_level=True,
    )
from stitchlab.horovod import (  # noqa: E402
    DistributedOptimizer,
    LayerProfile,
    PlanChange,
    Profile,
    auto_strategy,
    check_strategy,
    default_planner,
    even_strategy,
)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.wide = nn.Linear(64, 2048)
        self.narrow = nn.Linear(2048, 8)

    def forward(self, ids):
        return self.narrow(torch.relu(self.wide(self.emb(ids))))


@pytest.fixture(scope="module")
def single_rank():
    hvd.init()
    yield
    hvd.shutdown()


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_stitchlab_does_not_import_torch_or_horovod():
    out = _run(
        "import sys, stitchlab; print([m for m in ('torch', 'horovod') if m in sys.modules])"
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_missing_horovod_says_how_to_install_it():
    out = _run("import sys; sys.modules['horovod'] = None; import stitchlab.horovod")
    assert out.returncode != 0
    assert "ImportError" in out.stderr
    assert "make install" in out.stderr and "scripts/install-horovod.sh" in out.stderr


def test_optimizer_before_horovod_init_is_a_clear_error():
    code = (
        "import torch; from stitchlab.horovod import DistributedOptimizer\n"
        "m = torch.nn.Linear(2, 2)\n"
        "DistributedOptimizer(torch.optim.SGD(m.parameters(), lr=0.1), m)"
    )
    out = _run(code)
    assert out.returncode != 0
    assert "Horovod is not initialised" in out.stderr and "init()" in out.stderr


def test_auto_strategy_puts_sfb_where_it_pays_and_sparse_on_low_density_embeddings():
    model = Net()
    strategy, reasons = auto_strategy(
        model,
        4,
        layer_tokens={"wide": 16, "narrow": 4},
        embedding_rows={"emb": 40},
        bandwidth_bytes_per_s=1e9,
        flops_per_s=1e11,
        op_overhead_s=0.0,
    )
    assert strategy.schemes == {"emb": "sparse", "wide": "sfb", "narrow": "sfb"}
    assert reasons["wide"].startswith("sfb:")
    dense, _ = auto_strategy(
        model, 4, layer_tokens={"wide": 100_000, "narrow": 100_000}, embedding_rows={"emb": 4000}
    )
    assert dense.schemes == {}, "large batches and a dense embedding: SFB and sparse do not pay"


def test_auto_strategy_respects_the_memory_budget():
    model = Net()
    kwargs = dict(
        layer_tokens={"wide": 16, "narrow": 4},
        bandwidth_bytes_per_s=1e9,
        flops_per_s=1e11,
        op_overhead_s=0.0,
    )
    tight, reasons = auto_strategy(model, 4, memory_budget_bytes=4 * (2048 + 8) * 4, **kwargs)
    assert tight.schemes == {"narrow": "sfb"}
    assert "memory budget" in reasons["wide"]


def test_auto_strategy_counts_the_overhead_of_a_second_collective():
    # 73.7 kB saved on "narrow" is worth 74 µs at 1 GB/s: less than one extra collective's 200 µs
    strategy, reasons = auto_strategy(
        Net(),
        4,
        layer_tokens={"narrow": 4},
        bandwidth_bytes_per_s=1e9,
        flops_per_s=1e11,
        op_overhead_s=200e-6,
    )
    assert strategy.schemes == {}
    assert "saving -0.1" in reasons["narrow"]


def _wide(width: int) -> nn.Module:
    """benchmarks/horovod_step.py's "wide" model."""
    layers = []
    for _ in range(3):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


#: two H200s over NVLink as the profiler measured them in issue #8
NVLINK = dict(bandwidth_bytes_per_s=250e9, flops_per_s=1e13, op_overhead_s=0.0)
WIDE_TOKENS = {"0": 8, "2": 8, "4": 8, "6": 8}  # 4 samples per rank, 2 ranks


def test_measured_gather_cost_leaves_sfb_off_the_2048_wide_model():
    unmeasured, reasons = auto_strategy(_wide(2048), 2, layer_tokens=WIDE_TOKENS, **NVLINK)
    assert set(unmeasured.schemes) == {"0", "2", "4", "6"}, "issue #8: SFB on every layer"
    strategy, reasons = auto_strategy(
        _wide(2048), 2, layer_tokens=WIDE_TOKENS, gather_overhead_s=280e-6, **NVLINK
    )
    assert strategy.schemes == {}
    assert reasons["0"].startswith("allreduce:")
    assert "after the measured all-gather cost of 0.280 ms" in reasons["0"], reasons["0"]


def test_measured_gather_cost_keeps_sfb_on_the_8192_wide_model():
    strategy, reasons = auto_strategy(
        _wide(8192), 2, layer_tokens=WIDE_TOKENS, gather_overhead_s=280e-6, **NVLINK
    )
    assert set(strategy.schemes) == {"0", "2", "4"}, "the 8192 x 10 head saves too little"
    assert set(strategy.schemes.values()) == {"sfb"}
    assert reasons["0"].startswith("sfb:") and "0.280 ms" in reasons["0"]


def test_the_once_per_step_gather_cost_counts_sfb_and_sparse_layers_together():
    model = Net()
    kwargs = dict(
        layer_tokens={"wide": 16, "narrow": 4},
        embedding_rows={"emb": 40},
        bandwidth_bytes_per_s=1e9,
        flops_per_s=1e11,
        gather_overhead_s=0.0,
    )
    each, _ = auto_strategy(model, 4, **kwargs)
    assert each.schemes == {"emb": "sparse", "wide": "sfb", "narrow": "sfb"}
    # the three together save about 1.1 ms: a step that pays 1 ms once still gains
    paid, _ = auto_strategy(model, 4, gather_step_s=1e-3, **kwargs)
    assert paid.schemes == each.schemes
    off, reasons = auto_strategy(model, 4, gather_step_s=5e-3, **kwargs)
    assert off.schemes == {}
    for name in ("emb", "wide", "narrow"):
        assert reasons[name].startswith("allreduce:"), reasons[name]
        assert "5.000 ms a step pays once" in reasons[name]


def test_default_planner_plans_with_the_profiled_gather_cost():
    model = _wide(2048)
    layers = {n: LayerProfile(n, "linear", tokens=t) for n, t in WIDE_TOKENS.items()}
    rates = dict(bandwidth_bytes_per_s=250e9, latency_s=0.0, flops_per_s=1e13)
    profile = Profile(3, 2, 3e-3, 1e-3, **rates, layers=layers)
    assert profile.gather_overhead_s is None, "a Profile made by hand: not measured"
    unmeasured, _ = default_planner(profile, even_strategy(2), model)
    assert set(unmeasured.schemes) == {"0", "2", "4", "6"}
    profile.gather_overhead_s = 280e-6
    measured, reasons = default_planner(profile, even_strategy(2), model)
    assert measured.schemes == {}, reasons


class AttentionNet(nn.Module):
    """nn.MultiheadAttention uses its out_proj's weight without calling out_proj's forward."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.attn(x, x, x)[0]).mean()


def test_default_planner_leaves_layers_whose_forward_never_ran_to_the_allreduce():
    # the profile saw 0 tokens for out_proj: SFB looked free and would have rebuilt a zero gradient
    layers = {
        "attn.out_proj": LayerProfile("attn.out_proj", "linear", tokens=0),
        "head": LayerProfile("head", "linear", tokens=6),
    }
    rates = dict(bandwidth_bytes_per_s=1e6, latency_s=0.0, flops_per_s=1e13)
    profile = Profile(1, 2, 3e-3, 1e-3, **rates, layers=layers, gather_overhead_s=0.0)
    strategy, reasons = default_planner(profile, even_strategy(2), AttentionNet())
    assert "attn.out_proj" not in strategy.schemes, reasons["attn.out_proj"]
    assert reasons["attn.out_proj"] == "allreduce: not measured"


def test_sfb_on_a_linear_whose_weight_is_used_outside_its_forward_is_an_error(single_rank):
    model = AttentionNet()
    plan = Strategy(["cpu"], [1], schemes={"attn.out_proj": "sfb", "head": "sfb"})
    DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, plan)
    with pytest.raises(ValueError, match="'attn.out_proj' got a weight gradient but no factors"):
        model(torch.randn(2, 3, 8)).backward()


class TwoLinears(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(self.fc(x)).sum()


def _sfb_step(loss_of, passes: int = 1) -> TwoLinears:
    torch.manual_seed(0)
    model = TwoLinears()
    plan = Strategy(["cpu"], [1], schemes={"fc": "sfb"})
    opt = DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, plan,
                               backward_passes_per_step=passes)
    for _ in range(2):
        opt.zero_grad()
        for _ in range(passes):
            loss_of(model, torch.randn(5, 4)).backward()
        opt.step()
    return model


@pytest.mark.parametrize("loss_of", [
    lambda m, x: m(x) + 0.01 * m.fc.weight.square().sum(),  # an L2 penalty in the loss
    lambda m, x: 0.01 * m.fc.weight.square().sum() + m(x),  # (added before the forward)
    lambda m, x: m(x) + nn.functional.linear(x, m.fc.weight).sum(),
    lambda m, x: m(x) + m.head(m.fc(2 * x)).sum() + 0.01 * m.fc.weight.square().sum(),
], ids=["penalty", "penalty-first", "F.linear", "two-calls-and-penalty"])
def test_sfb_on_a_weight_also_used_outside_its_forward_that_ran_is_an_error(single_rank, loss_of):
    # the rebuilt δᵀ·X would drop the other use's part of the gradient without a word
    with pytest.raises(ValueError, match="'fc': its weight also got gradient from outside its forward"):
        _sfb_step(loss_of)


@pytest.mark.parametrize("loss_of,passes", [
    (lambda m, x: m(x), 1),
    (lambda m, x: m(x), 2),
    (lambda m, x: m(torch.stack([x, -x])), 1),  # a 3-d input
    (lambda m, x: m(x) + m.head(m.fc(2 * x)).sum() + m(3 * x), 2),  # the layer called three times
    (lambda m, x: m(x) + 0 * m.fc.weight.sum(), 1),  # an outside use of zero gradient
], ids=["plain", "two-passes", "3-d", "three-calls", "zero-outside"])
def test_sfb_of_a_weight_used_only_by_its_forward_trains_as_one_process(single_rank, loss_of, passes):
    model = _sfb_step(loss_of, passes)
    torch.manual_seed(0)
    plain = TwoLinears()
    opt = torch.optim.SGD(plain.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        for _ in range(passes):
            loss_of(plain, torch.randn(5, 4)).backward()
        opt.step()
    for a, b in zip(model.parameters(), plain.parameters(), strict=True):
        torch.testing.assert_close(a, b)


def test_auto_strategy_on_one_rank_compresses_nothing():
    strategy, _ = auto_strategy(Net(), 1, layer_tokens={"wide": 1}, embedding_rows={"emb": 1})
    assert strategy.schemes == {}


@pytest.mark.parametrize("world_size", [0, -1, 2.0, "2", None, True])
def test_a_bad_world_size_is_named(world_size):
    for plan in (lambda: even_strategy(world_size), lambda: auto_strategy(Net(), world_size)):
        with pytest.raises(ValueError, match=f"world_size must be a positive integer.*got "
                                             f"{world_size!r}"):
            plan()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"latency_s": -1.0}, "latency_s must be a finite number >= 0, got -1.0"),
    ({"op_overhead_s": float("nan")}, "op_overhead_s must be a finite number >= 0, got nan"),
    ({"gather_step_s": float("inf")}, "gather_step_s must be a finite number >= 0, got inf"),
    ({"bandwidth_bytes_per_s": float("inf")}, "bandwidth_bytes_per_s must be a finite number > 0"),
    ({"layer_tokens": {"wide": "4096"}}, r"layer_tokens\['wide'\] must be a finite number >= 0"),
    ({"layer_tokens": {"wide": float("inf")}}, r"layer_tokens\['wide'\] must be a finite"),
    ({"embedding_rows": {"emb": 4001}}, r"embedding_rows\['emb'\]=4001 is more than the 1000 rows"),
])
def test_auto_strategy_names_a_bad_rate_or_count(kwargs, match):
    """Before, a negative latency or a NaN overhead silently changed the plan, and a string token
    count raised a bare TypeError from a comparison."""
    args = {"layer_tokens": {"wide": 4096}, "embedding_rows": {"emb": 10}, **kwargs}
    with pytest.raises(ValueError, match=match):
        auto_strategy(Net(), 4, **args)


def test_auto_strategy_names_a_model_that_is_not_a_module():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module, got NoneType"):
        auto_strategy(None, 2)


class TiedNet(Net):
    """A language-model-like net whose output layer is the embedding's matrix (tied weights)."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(64, 1000, bias=False)
        self.head.weight = self.emb.weight


def test_tied_weights_get_no_sfb_or_sparse_rows():
    """Sparse rows send only the rows looked up and SFB only its layer's δᵀ·X: a weight another
    module also uses would lose that module's part of its gradient."""
    strategy, reasons = auto_strategy(
        TiedNet(), 4, layer_tokens={"wide": 16, "narrow": 4, "head": 4}, embedding_rows={"emb": 40},
        bandwidth_bytes_per_s=1e9, flops_per_s=1e11, op_overhead_s=0.0,
    )
    assert strategy.schemes == {"wide": "sfb", "narrow": "sfb"}
    assert "tied" in reasons["emb"] and "tied" in reasons["head"]
    for layer, scheme in (("emb", "sparse"), ("head", "sfb")):
        with pytest.raises(ValueError, match="tied weights"):
            check_strategy(Strategy(["a"], [1], schemes={layer: scheme}), TiedNet(), 1)


@pytest.mark.parametrize(
    "strategy, fragment",
    [
        (Strategy(["a", "b"], [1, 1]), "for 2 ranks"),
        (Strategy(["a"], [1], schemes={"decoder.fc": "sfb"}), "no such module"),
        (Strategy(["a"], [1], schemes={"wide": "sparse"}), "nn.Embedding"),
        (Strategy(["a"], [1], schemes={"wide": "hierarchical"}), "no groups"),
        (Strategy(["a"], [1], buckets=[["wide.weight", "lm_head.weight"]]), "'lm_head.weight'"),
    ],
)
def test_plans_that_do_not_fit_the_model_are_rejected(strategy, fragment):
    with pytest.raises(ValueError, match=fragment):
        check_strategy(strategy, Net(), 1)


@pytest.mark.parametrize(
    "strategy, fragment",
    [
        (Strategy(["a"], [1], groups=[[0]], schemes={"emb": "hierarchical"}), "sparse=True"),
        (Strategy(["a"], [1], buckets=[["wide.weight", "emb.weight"]]), "has buckets"),
        (Strategy(["a"], [1], buckets=[["wide.weight", "narrow.weight"]]), "has buckets"),
    ],
)
def test_plans_that_horovod_cannot_reduce_sparse_gradients_for_are_rejected(strategy, fragment):
    # Horovod's grouped and process-set all-reduce take dense tensors only: these failed in the
    # first backward pass with "Tensor type torch.sparse.FloatTensor is not supported"
    model = Net()
    model.emb.sparse = True
    with pytest.raises(ValueError, match=fragment):
        check_strategy(strategy, model, 1)
    # its own 'sparse' scheme takes it out of Horovod's hands, buckets or not
    check_strategy(Strategy(["a"], [1], schemes={"emb": "sparse"}), model, 1)
    check_strategy(
        Strategy(["a"], [1], buckets=[["wide.weight", "emb.weight"]], schemes={"emb": "sparse"}),
        model,
        1,
    )


def test_optimizer_accepts_a_plan_object_carrying_a_strategy(single_rank):
    model = Net()
    plan = SimpleNamespace(
        strategy=Strategy(["cpu"], [8], schemes={"wide": "sfb", "emb": "sparse"})
    )
    opt = DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, plan)
    ids = torch.randint(0, 1000, (8, 3))
    model(ids).sum().backward()
    ref = Net()
    ref.load_state_dict(model.state_dict())
    ref(ids).sum().backward()
    opt.step()
    assert opt.strategy.schemes == {"wide": "sfb", "emb": "sparse"}
    assert opt.batch_share == 8
    # with one rank the rebuilt gradients are the local ones
    torch.testing.assert_close(model.wide.weight.grad, ref.wide.weight.grad, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(model.emb.weight.grad, ref.emb.weight.grad, rtol=0, atol=0)


def test_optimizer_rejects_bad_arguments(single_rank):
    model = Net()
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="'sometimes'"):
        DistributedOptimizer(sgd, model, "sometimes")
    with pytest.raises(TypeError, match="Strategy"):
        DistributedOptimizer(sgd, model, {"schemes": {}})
    with pytest.raises(ValueError, match="backward_passes_per_step"):
        DistributedOptimizer(sgd, model, backward_passes_per_step=0)
    other = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    with pytest.raises(ValueError, match="not parameters of the model"):
        DistributedOptimizer(other, model)
    wrapped = DistributedOptimizer(sgd, model)
    with pytest.raises(TypeError, match="already a distributed optimizer"):
        DistributedOptimizer(wrapped, model)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"backward_passes_per_step": float("inf")}, ValueError, "backward_passes_per_step must be"),
    ({"backward_passes_per_step": None}, ValueError, "backward_passes_per_step must be"),
    ({"backward_passes_per_step": float("nan")}, ValueError, "got nan"),
    ({"local_batch_size": float("inf")}, ValueError, "local_batch_size must be a non-negative"),
    ({"profile_steps": float("inf")}, ValueError, "profile_steps must be a non-negative"),
    ({"memory_budget_bytes": -1}, ValueError, "memory_budget_bytes must be a number of bytes"),
    ({"memory_budget_bytes": float("nan")}, ValueError, "memory_budget_bytes must be"),
    ({"callbacks": None}, TypeError, "callbacks must be a list"),
    ({"planner": 5}, TypeError, "planner must be a function"),
    ({"compression": "fp16"}, TypeError, "compression must be a Horovod compression"),
])
def test_optimizer_names_bad_settings_when_it_is_built(single_rank, kwargs, error, match):
    """Before: OverflowError/TypeError from int(), or (memory budget, planner, compression) an
    error only at the first re-plan or all-reduce, in the middle of training."""
    model = Net()
    with pytest.raises(error, match=match):
        DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, **kwargs)


def test_too_many_backward_passes_is_an_error_not_a_wrong_gradient(single_rank):
    model = Net()
    _opt = DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        model,
        Strategy(["cpu"], [1], schemes={"wide": "sfb"}),
    )
    ids = torch.randint(0, 1000, (2, 3))
    model(ids).sum().backward()
    with pytest.raises(RuntimeError, match="backward_passes_per_step"):
        model(ids).sum().backward()


def test_a_gradient_left_from_the_last_step_under_sfb_is_an_error_not_dropped(single_rank):
    """Without zero_grad() between steps one process adds the new gradient to the old one; SFB
    rebuilt only the new one into .grad (0.08 apart after two SGD steps). zero_grad() with
    zeros, zero_grad() between forward and backward, and accumulated passes stay accepted."""
    def model_and_optimizer(passes: int = 1) -> tuple[nn.Module, DistributedOptimizer]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        plan = Strategy(["cpu"], [1], schemes={"0": "sfb"})
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        return model, DistributedOptimizer(opt, model, plan, backward_passes_per_step=passes)

    x = torch.randn(5, 4)
    model, opt = model_and_optimizer()
    model(x).square().sum().backward()
    opt.step()
    model(x).square().sum().backward()
    with pytest.raises(ValueError, match="'0': its weight's .grad held a gradient from before this step"):
        opt.step()
    for between in (lambda o: o.zero_grad(set_to_none=False), lambda o: None):
        model, opt = model_and_optimizer()
        for _ in range(2):
            opt.zero_grad(set_to_none=False)
            loss = model(x).square().sum()
            between(opt)
            loss.backward()
            opt.step()
    model, opt = model_and_optimizer(passes=2)
    for _ in range(2):
        opt.zero_grad()
        model(x[:2]).square().sum().backward()
        model(x[2:]).square().sum().backward()
        opt.step()


def test_optimizer_works_with_lr_schedulers_and_state_dicts(single_rank):
    model = Net()
    opt = DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=0.1), model)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    model(torch.randint(0, 1000, (2, 3))).sum().backward()
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)
    state = opt.state_dict()
    opt.load_state_dict(state)
    assert len(opt.state) == 5
    assert "DistributedOptimizer(Adam" in repr(opt)


def test_replan_keeps_the_optimizer_state(single_rank):
    model = Net()
    opt = DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=0.1), model)
    model(torch.randint(0, 1000, (2, 3))).sum().backward()
    opt.step()
    before = {id(p): s["exp_avg"].clone() for p, s in opt.state.items()}
    opt.replan(Strategy(["cpu"], [1], schemes={"wide": "sfb"}))
    assert {id(p): s["exp_avg"] for p, s in opt.state.items()}.keys() == before.keys()
    assert all(torch.equal(opt.state[p]["exp_avg"], before[id(p)]) for p in opt.state)
    opt.zero_grad()
    model(torch.randint(0, 1000, (2, 3))).sum().backward()
    opt.step()
    assert all(int(s["step"]) == 2 for s in opt.state.values())
    assert opt.history[-1].changed_layers() == {"wide": ("allreduce", "sfb")}


def test_plan_summary_escapes_html():
    old = Strategy(["a"], [1])
    new = Strategy(["a"], [1], schemes={"<script>": "sfb"})
    change = PlanChange(
        "<b>trigger</b>", old, new, {"<script>": "sfb: <img src=x onerror=alert(1)>"}
    )
    page = change._repr_html_()
    assert "<script>" not in page and "<img" not in page and "<b>trigger" not in page
    assert "&lt;script&gt;" in page and "&lt;img" in page
    assert "allreduce -> sfb" in str(change)
    profile = Profile(1, 1, 0.1, 0.0, 1e9, 1e-5, 1e10)
    assert "Profile of 1 step" in profile._repr_html_()


def test_elastic_reset_replans_for_the_new_world_size(single_rank, monkeypatch):
    model = Net()
    seen = []

    class Recorder:
        def on_plan(self, change):
            seen.append(change)

    opt = DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        model,
        Strategy(["cpu"], [1], schemes={"wide": "sfb"}),
        callbacks=[Recorder()],
    )
    opt.on_reset()  # same world size: nothing to do
    assert seen == []
    monkeypatch.setattr(hvd, "size", lambda: 2)  # as after Horovod elastic added a worker
    opt.on_reset()
    assert opt.strategy.world_size == 2
    assert opt.strategy.schemes == {"wide": "sfb"}, "kept: no profile to re-plan from"
    assert "world size changed from 1 to 2" in seen[-1].trigger


def test_profile_probes_and_timings_run_on_the_models_device(single_rank, monkeypatch):
    """The collective and matmul probes use the device of the model's parameters (a CUDA model's
    gradients are reduced with NCCL; probing host tensors measured Gloo and a host matmul)."""
    from stitchlab.horovod import _profile

    seen = {}

    def collective(repeats=7, device=None):
        seen["collective"] = device
        return 1e9, 1e-5

    def matmul(shape, repeats=3, device=None):
        seen["matmul"] = device
        return 1e11

    def gather(repeats=7, device=None):
        seen["gather"] = device
        return 2.5e-4, 1e-4

    real_matmul, real_gather = _profile.measure_matmul, _profile.measure_gather
    monkeypatch.setattr(_profile, "measure_collective", collective)
    monkeypatch.setattr(_profile, "measure_matmul", matmul)
    monkeypatch.setattr(_profile, "measure_gather", gather)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4))
    profiler = _profile.StepProfiler(model)
    model(torch.randn(2, 8)).sum().backward()
    profiler.end_step(0.0)
    profile = profiler.finish()
    cpu = torch.device("cpu")
    assert seen == {"collective": cpu, "matmul": cpu, "gather": cpu}
    assert profile.layers["0"].forward_s > 0 and profile.flops_per_s == 1e11
    assert (profile.gather_overhead_s, profile.gather_step_s) == (2.5e-4, 1e-4)
    assert "250.0 µs each + 100.0 µs once per step" in profile.rates()
    assert "250.0 µs each" in profile._repr_html_()
    # the real probes accept the device too (CPU here; one rank: no all-gather to measure)
    state = torch.get_rng_state()
    assert real_matmul((4, 2, 8), device="cpu") > 0
    assert real_gather(device="cpu") == (0.0, 0.0)
    assert torch.equal(torch.get_rng_state(), state), "probes must not move training's RNG"


def test_profiler_reads_layer_inputs_given_as_keywords(single_rank, monkeypatch):
    """``layer(input=x)`` works with the SFB and sparse hooks; the profiler's hooks read it too
    (they indexed the positional arguments and raised IndexError in the first step)."""
    from stitchlab.horovod import _profile

    monkeypatch.setattr(_profile, "measure_collective", lambda repeats=7, device=None: (1e9, 0.0))
    monkeypatch.setattr(_profile, "measure_matmul", lambda shape, repeats=3, device=None: 1e11)
    monkeypatch.setattr(_profile, "measure_gather", lambda repeats=7, device=None: (0.0, 0.0))
    model = Net()
    profiler = _profile.StepProfiler(model)
    ids = torch.tensor([[1, 2, 2], [5, 1, 7]])
    model.narrow(input=torch.relu(model.wide(input=model.emb(input=ids)))).sum().backward()
    profiler.end_step(0.0)
    profile = profiler.finish()
    assert profile.layers["wide"].tokens == 6 and profile.layers["narrow"].tokens == 6
    assert profile.layers["emb"].rows == 4


def test_a_model_without_linear_or_embedding_layers_skips_the_gather_probe(
    single_rank, monkeypatch
):
    from stitchlab.horovod import _profile

    def gather(repeats=7, device=None):
        raise AssertionError("no layer could all-gather: the probe must not run")

    monkeypatch.setattr(_profile, "measure_gather", gather)
    model = torch.nn.Sequential(torch.nn.Conv1d(2, 2, 1))
    profiler = _profile.StepProfiler(model)
    model(torch.randn(1, 2, 3)).sum().backward()
    profiler.end_step(0.0)
    profile = profiler.finish()
    assert profile.gather_overhead_s is None
    assert "all-gathering" not in profile.rates()


@pytest.mark.parametrize(
    "times, expected",
    [
        # the second layer costs less than the first: the rest is paid once per step
        ((1.0, 1.5, 1.7), (0.2, 0.3)),
        # no sign of a shared part: each layer costs the same
        ((1.0, 1.3, 1.6), (0.3, 0.0)),
        # noise: the second layer seems dearer than the first -> both at their mean
        ((1.0, 1.1, 1.5), (0.25, 0.0)),
        # noise: a round with a layer came out faster than the one without
        ((1.0, 0.9, 1.2), (0.1, 0.0)),
        ((1.0, 0.9, 0.8), (0.0, 0.0)),
        ((1.0, 1.4, 1.3), (0.0, 0.4)),
    ],
)
def test_gather_probe_splits_its_times_without_negative_costs(times, expected):
    from stitchlab.horovod._profile import _split_gather_cost

    per_layer, per_step = _split_gather_cost(*times)
    assert per_layer == pytest.approx(expected[0]) and per_step == pytest.approx(expected[1])
    assert per_layer >= 0 and per_step >= 0
