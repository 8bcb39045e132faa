import json

import pytest
from stitchlab.topology import Device, DocumentError, ModelProfile, ProfileError
from stitchlab.topology.profile import LayerProfile, ParamInfo

torch = pytest.importorskip("torch")
nn = torch.nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 16)
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, idx):
        return self.fc2(self.act(self.fc1(self.emb(idx)))).mean(1)


@pytest.fixture(scope="module")
def measured():
    torch.manual_seed(0)
    net = Net()
    idx = torch.arange(64).reshape(8, 8)  # 64 distinct rows of 1000
    opt = torch.optim.Adam(net.parameters())
    return ModelProfile.from_module(net, idx, steps=2, optimizer=opt, device_flops=1e10)


def test_layers_in_forward_order_with_params(measured):
    assert [layer.name for layer in measured.layers] == ["emb", "fc1", "fc2"]
    assert [p.name for p in measured.layers[1].params] == ["fc1.weight", "fc1.bias"]
    assert measured.layers[1].params[0].shape == (32, 16)
    assert measured.param_bytes == (1000 * 16 + 32 * 16 + 32 + 4 * 32 + 4) * 4


def test_linear_dims_tokens_and_embedding_density(measured):
    fc1 = measured.layer("fc1")
    assert (fc1.kind, fc1.in_features, fc1.out_features, fc1.tokens) == ("linear", 16, 32, 64)
    emb = measured.layer("emb")
    assert emb.kind == "embedding" and emb.grad_density == pytest.approx(64 / 1000)
    assert (emb.num_embeddings, emb.embedding_dim) == (1000, 16)


def test_times_and_activations_are_measured(measured):
    assert measured.method == "measured" and measured.batch_size == 8
    assert all(x.forward_time > 0 and x.backward_time > 0 for x in measured.layers)
    # fc1 keeps its input (64x16 floats) and the in-place ReLU's output (64x32 floats)
    assert measured.layer("fc1").activation_bytes == (64 * 16 + 64 * 32) * 4
    assert measured.optimizer_state_factor == pytest.approx(2.0)
    assert measured.optimizer_time > 0


def test_estimate_divides_flops_by_device_speed():
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8))
    dev = Device("x", "gpu", flops=1e12, memory=2**30, name="X")
    prof = ModelProfile.from_module(net, torch.randn(16, 64), device=dev, estimate=True)
    assert prof.method == "estimated" and prof.device == "X" and prof.device_flops == 1e12
    first = prof.layers[0]
    assert first.forward_flops == pytest.approx(2 * 16 * 64 * 128, rel=0.01)
    assert first.forward_time == pytest.approx(first.forward_flops / 1e12)
    assert first.backward_time == pytest.approx(2 * first.forward_time)


def test_save_load_round_trip(measured, tmp_path):
    path = tmp_path / "p.json"
    measured.save(path)
    again = ModelProfile.load(path)
    assert again.to_dict() == measured.to_dict()
    assert again.layer("fc1").params[0].shape == (32, 16)


def test_bad_profile_file_names_the_place(measured, tmp_path):
    data = measured.to_dict()
    data["layers"][2]["backward_time"] = "fast"
    with pytest.raises(DocumentError, match=r"\$\.layers\[2\]\.backward_time: \"fast\" is not of"):
        ModelProfile.from_dict(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(measured.to_dict(), indent=2)[:-3] + ",,}")
    with pytest.raises(DocumentError, match=r"bad\.json:\d+:\d+: invalid JSON"):
        ModelProfile.load(path)


def test_bad_profiles_are_named():
    with pytest.raises(ProfileError, match="unknown kind 'lstm'"):
        LayerProfile("x", "lstm")
    with pytest.raises(ProfileError, match="unknown dtype 'float7'"):
        ParamInfo("w", (1,), "float7")
    p = ParamInfo("w", (2,))
    with pytest.raises(ProfileError, match="'w' appears in layers 'a' and 'b'"):
        ModelProfile("m", 1, "cpu", 1e9, [LayerProfile("a", params=[p]),
                                           LayerProfile("b", params=[p])])


def test_frozen_parameters_and_modules_used_through_their_weights():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(100, 16), nn.TransformerEncoderLayer(16, 2, 32, batch_first=True),
                          nn.Linear(16, 4))
    model[0].weight.requires_grad_(False)
    prof = ModelProfile.from_module(model, torch.randint(0, 100, (4, 8)), steps=1,
                                    device_flops=1e10)
    names = [layer.name for layer in prof.layers]
    # MultiheadAttention calls out_proj through its weight: it sits where its gradient is ready
    assert names.index("1.self_attn") < names.index("1.self_attn.out_proj") < names.index("1.norm1")
    emb = prof.layer("0")
    assert [p.trainable for p in emb.params] == [False]
    assert prof.trainable_bytes == prof.param_bytes - 100 * 16 * 4
    need = prof.memory_needed(4)
    assert need["gradients"] == prof.trainable_bytes
    assert ModelProfile.from_json(prof.to_json()).layer("0").params[0].trainable is False


@pytest.mark.parametrize("text", ["NaN", "Infinity"])
@pytest.mark.parametrize("field", ["forward_time", "backward_time", "activation_bytes",
                                   "forward_flops"])
def test_nan_and_infinite_layer_amounts_in_a_file_are_refused(tmp_path, field, text):
    """JSON as Python reads it allows NaN and Infinity; a NaN forward time made a 0 ms step."""
    prof = ModelProfile("m", 8, "cpu", 1e12, [LayerProfile("fc", "linear", [ParamInfo("w", (4, 4))],
                                                           forward_time=1e-3, backward_time=2e-3)])
    data = prof.to_dict()
    data["layers"][0][field] = float(text.replace("inity", ""))
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))  # writes NaN / Infinity, as Python's json reads them
    assert text in path.read_text()
    with pytest.raises(ProfileError, match=f"layer 'fc' {field} is .*; it must be a finite"):
        ModelProfile.load(path)


@pytest.mark.parametrize("field", ["device_flops", "optimizer_time", "optimizer_state_factor"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nan_and_infinite_profile_amounts_are_refused(field, value):
    kwargs = {"name": "m", "batch_size": 8, "device": "cpu", "device_flops": 1e12, "layers": [],
              field: value}
    with pytest.raises(ProfileError, match=f"profile {field} is {value!r}; it must be a finite"):
        ModelProfile(**kwargs)


def test_a_layer_name_listed_twice_is_refused():
    with pytest.raises(ProfileError, match="layer name 'fc' appears twice"):
        ModelProfile("m", 1, "cpu", 1e9, [LayerProfile("fc", params=[ParamInfo("a", (2,))]),
                                          LayerProfile("fc", params=[ParamInfo("b", (2,))])])


@pytest.mark.parametrize(("layer", "match"), [
    (lambda: LayerProfile("fc", "linear", [ParamInfo("fc.weight", (2**30, 2**30))]),
     r"shape \(1073741824, 1073741824\); sizes must be >= 0 and hold at most"),
    (lambda: LayerProfile("fc", "linear", [ParamInfo("fc.weight", (-1, 4))]), "sizes must be >= 0"),
    (lambda: LayerProfile("fc", "linear", [ParamInfo("fc.weight", (10, 4))], in_features=4,
                          out_features=2**63), "out_features is 9223372036854775808"),
    (lambda: LayerProfile("fc", "linear", tokens=-3), "tokens is -3"),
    (lambda: LayerProfile("fc", "linear", tokens=2.5), "tokens is 2.5"),
    (lambda: LayerProfile("fc", "linear", [ParamInfo("fc.weight", (10, 4))], in_features=4,
                          out_features=2**40), r"out_features=1099511627776, in_features=4 but"),
    (lambda: LayerProfile("e", "embedding", [ParamInfo("e.weight", (100, 8))], num_embeddings=8,
                          embedding_dim=100), r"has shape \(100, 8\); they must agree"),
])
def test_sizes_too_large_for_the_cost_models_or_not_matching_the_weight_are_refused(layer, match):
    """Before: OverflowError from the simulator, or HiGHS 'Model error' from SFB placement when a
    linear layer's out_features disagreed with its weight."""
    with pytest.raises(ProfileError, match=match):
        layer()


@pytest.mark.parametrize(("make", "match"), [
    (lambda: ParamInfo("w", "12"), r"shape '12'; give a list of integer sizes"),
    (lambda: ParamInfo("w", (2.5,)), r"shape \(2.5,\); give a list"),
    (lambda: ParamInfo("w", None), "shape None"),
    (lambda: ModelProfile("m", 8.5, "cpu", 1e9, []), "batch_size 8.5 must be a positive integer"),
    (lambda: ModelProfile("m", "8", "cpu", 1e9, []), "batch_size '8' must be a positive integer"),
    (lambda: ModelProfile("m", 8, "cpu", 1e9, None), "layers None must be a list"),
    (lambda: ModelProfile("m", 8, "cpu", 1e9, [{"name": "l", "bogus": 1}]),
     "got an unexpected keyword argument 'bogus'"),
    (lambda: LayerProfile("l", "linear", [{"nm": "w"}]), "got an unexpected keyword argument 'nm'"),
])
def test_profile_fields_of_the_wrong_type_are_named_not_truncated(make, match):
    """Before: shape '12' became (1, 2), (2.5,) became (2,) and batch_size 8.5 was kept, silently;
    the others raised TypeError from inside the dataclass."""
    with pytest.raises(ProfileError, match=match):
        make()


def test_whole_floats_from_json_are_still_sizes():
    prof = ModelProfile("m", 8.0, "cpu", 1e9, [{"name": "l", "params": [{"name": "w",
                                                                         "shape": [4.0, 2]}]}])
    assert prof.layers[0].params[0].shape == (4, 2)
