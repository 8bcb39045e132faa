"""SFB and sparse codecs in one process: the rebuilt gradients equal autograd's."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from stitchlab.compression.sfb import LinearFactors, linear_grads  # noqa: E402
from stitchlab.compression.sparse import EmbeddingRows, decode_rows, encode_rows  # noqa: E402
from torch import nn  # noqa: E402


def _rel(a, b):
    return float((a.double() - b.double()).norm() / b.double().norm())


@pytest.mark.parametrize("bias", [True, False])
def test_sfb_rebuilds_the_linear_gradient_for_token_inputs(bias):
    torch.manual_seed(0)
    layer = nn.Linear(6, 5, bias=bias)
    cap = LinearFactors(layer)
    x = torch.randn(3, 7, 6)  # batch × tokens × features
    (layer(x).sin().sum()).backward()
    gx, gdy = cap.take()
    assert gx.shape == (21, 6) and gdy.shape == (21, 5)
    gw, gb = linear_grads(gx, gdy, bias=bias)
    assert _rel(gw, layer.weight.grad) < 1e-6
    if bias:
        assert _rel(gb, layer.bias.grad) < 1e-6
    else:
        assert gb is None


def test_sfb_covers_weight_sharing_and_accumulated_passes():
    torch.manual_seed(1)
    layer = nn.Linear(4, 4)
    cap = LinearFactors(layer)
    for _ in range(2):  # two accumulated backward passes, the layer used twice in each
        x = torch.randn(5, 4)
        layer(torch.tanh(layer(x))).pow(2).sum().backward()
    gx, gdy = cap.take()
    assert gx.shape[0] == 20
    gw, gb = linear_grads(gx, gdy, bias=True)
    assert _rel(gw, layer.weight.grad) < 1e-6
    assert _rel(gb, layer.bias.grad) < 1e-6


def test_sfb_ignores_evaluation_forwards():
    layer = nn.Linear(3, 3)
    cap = LinearFactors(layer)
    with torch.no_grad():
        layer(torch.randn(2, 3))
    assert cap.rows == 0


def test_sfb_ignores_forwards_that_never_get_a_gradient():
    torch.manual_seed(4)
    layer = nn.Linear(3, 3)
    cap = LinearFactors(layer)
    layer(torch.randn(2, 3))  # evaluation without no_grad: never backpropagated
    x = torch.randn(4, 3)
    layer(x).sum().backward()
    gx, gdy = cap.take()
    assert torch.equal(gx, x)
    gw, _ = linear_grads(gx, gdy, bias=True)
    assert _rel(gw, layer.weight.grad) < 1e-6


def test_sfb_rejects_other_layers_and_mismatched_factors():
    with pytest.raises(TypeError, match="nn.Linear"):
        LinearFactors(nn.Conv1d(2, 2, 1))
    with pytest.raises(ValueError, match="same T"):
        linear_grads(torch.zeros(3, 2), torch.zeros(4, 2), bias=False)


def test_sparse_rows_rebuild_the_embedding_gradient_exactly():
    torch.manual_seed(2)
    emb = nn.Embedding(50, 4)
    cap = EmbeddingRows(emb)
    ids = torch.randint(0, 10, (6, 3))
    (emb(ids) * torch.randn(6, 3, 4)).sum().backward()
    rows = cap.take()
    assert rows.tolist() == sorted(set(ids.flatten().tolist()))
    idx, val = encode_rows(emb.weight.grad, rows)
    assert torch.equal(decode_rows([idx], [val], 50), emb.weight.grad)


def test_sparse_merge_is_the_exactly_rounded_sum_in_any_order():
    torch.manual_seed(3)
    pieces = [(torch.randint(0, 8, (5,)).unique(), None) for _ in range(4)]
    pieces = [
        (i, torch.randn(len(i), 3) * 10.0 ** torch.randint(-4, 4, (len(i), 1))) for i, _ in pieces
    ]
    dense = torch.zeros(8, 3, dtype=torch.float64)
    for i, v in pieces:
        dense.index_add_(0, i, v.double())
    forward = decode_rows([i for i, _ in pieces], [v for _, v in pieces], 8)
    backward = decode_rows([i for i, _ in pieces[::-1]], [v for _, v in pieces[::-1]], 8)
    assert torch.equal(forward, dense.float())
    assert torch.equal(forward, backward)


def test_sparse_encoding_reads_sparse_gradients():
    emb = nn.Embedding(20, 3, sparse=True)
    emb(torch.tensor([1, 5, 5])).sum().backward()
    idx, val = encode_rows(emb.weight.grad, torch.zeros(0, dtype=torch.int64))
    assert sorted(idx.tolist()) == [1, 5]
    assert torch.equal(decode_rows([idx], [val], 20), emb.weight.grad.to_dense())


def test_sparse_decode_rejects_rows_outside_the_table():
    with pytest.raises(ValueError, match="out of range"):
        decode_rows([torch.tensor([3])], [torch.zeros(1, 2)], 3)


@pytest.mark.parametrize("rows", [torch.tensor([0.9]), torch.tensor([True, False])])
def test_encode_rows_refuses_positions_that_are_not_integers(rows: torch.Tensor) -> None:
    """A float would be truncated to another row and a bool mask read as positions 1, 0."""
    with pytest.raises(TypeError, match="rows must be integer row indices"):
        encode_rows(torch.ones(2, 3), rows)


def test_capture_hooks_read_an_input_given_by_keyword():
    """``layer(input=x)`` is a legal call; the hooks used to index an empty ``args``."""
    torch.manual_seed(0)
    emb = nn.Embedding(10, 3)
    rows = EmbeddingRows(emb)
    emb(input=torch.tensor([[1, 4, 4]])).sum().backward()
    assert rows.take().tolist() == [1, 4]
    layer = nn.Linear(3, 2)
    factors = LinearFactors(layer)
    layer(input=torch.randn(4, 3)).sum().backward()
    gw, gb = linear_grads(*factors.take(), bias=True)
    assert torch.allclose(gw, layer.weight.grad) and torch.allclose(gb, layer.bias.grad)


def test_encode_rows_sends_a_repeated_row_once():
    """Rows given twice, by hand, in any order: the decoded gradient still equals the dense one."""
    grad = torch.zeros(6, 3)
    grad[[1, 4]] = torch.randn(2, 3)
    idx, val = encode_rows(grad, torch.tensor([4, 1, 4, 1]))
    assert idx.tolist() == [1, 4]
    assert torch.equal(decode_rows([idx], [val], 6), grad)


def test_encode_rows_reads_a_sparse_gradient_with_both_dimensions_sparse():
    grad = torch.sparse_coo_tensor(
        torch.tensor([[1, 1, 4], [0, 2, 1]]), torch.tensor([1.5, 2.0, 3.0]), (6, 3), check_invariants=True
    )
    idx, val = encode_rows(grad, torch.zeros(0, dtype=torch.int64))
    assert idx.tolist() == [1, 4] and val.shape == (2, 3)
    assert torch.equal(decode_rows([idx], [val], 6), grad.to_dense())


@pytest.mark.parametrize(
    "values, expected",
    [
        # float64 would round 2**53 + 1
        (torch.tensor([[2**53 + 1]]), torch.tensor([[2**54 + 2]])),
        # int32 wraps as its own sum does
        (torch.tensor([[2**31 - 1]], dtype=torch.int32), torch.tensor([[-2]], dtype=torch.int32)),
        # float64 would drop the imaginary part
        (torch.tensor([[1 + 2j]], dtype=torch.complex64), torch.tensor([[2 + 4j]], dtype=torch.complex64)),
    ],
)
def test_decode_rows_sums_integers_and_complex_values_exactly(values, expected):
    out = decode_rows([torch.tensor([0]), torch.tensor([0])], [values, values], 1)
    assert out.dtype == values.dtype and torch.equal(out, expected)


@pytest.mark.parametrize(
    "indices, values, error, match",
    [
        ([torch.tensor([0])], [torch.ones(1)], ValueError, "n × d values"),
        ([torch.tensor([0]), torch.tensor([0])], [torch.ones(1, 2), torch.ones(1, 3)], ValueError, "d = 2"),
        ([torch.tensor([0, 1])], [torch.ones(1, 2)], ValueError, r"indices \(2,\)"),
        ([torch.tensor([0])], [torch.ones(1, 2, dtype=torch.bool)], TypeError, "bool"),
    ],
)
def test_decode_rows_names_pieces_it_cannot_sum(indices, values, error, match):
    with pytest.raises(error, match=match):
        decode_rows(indices, values, 3)


def test_encode_rows_refuses_a_gradient_that_is_not_a_matrix():
    with pytest.raises(ValueError, match=r"V × d matrix, got shape \(6,\)"):
        encode_rows(torch.ones(6), torch.tensor([1]))


def test_encode_rows_without_rows_sends_the_non_zero_rows_of_a_dense_gradient():
    """No rows given: the rows holding a non-zero or NaN value, ascending, found in one pass (a
    looked-up row whose gradient is zero adds nothing; a row only a direct use of the table
    touched is sent)."""
    torch.manual_seed(4)
    grad = torch.zeros(9, 3)
    grad[[7, 2]] = torch.randn(2, 3)
    grad[5, 1] = float("nan")
    grad[0, 2] = -1e-30
    idx, val = encode_rows(grad)
    assert idx.tolist() == [0, 2, 5, 7] and idx.dtype == torch.int64
    assert torch.allclose(val, grad[[0, 2, 5, 7]], equal_nan=True)
    assert torch.allclose(decode_rows([idx], [val], 9), grad, equal_nan=True)
