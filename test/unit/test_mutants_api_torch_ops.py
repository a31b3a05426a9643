"""The PyTorch operators' own rules (found by ``benchmarks/mutation.py``).

Each case pins a branch of ``torch_ops.py`` the operator tests left free: the
``int[]?`` form of a config and back, the fused epilogue's scales when only one
is given, and when a call installs the on-disk kernel cache (CUDA tensors, no
kernel builder yet, a compiler present). All run on the CPU (the model).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from gemm_opt import torch_ops
from gemm_opt.core import schedules as S
from gemm_opt.kernels import disk_cache
from gemm_opt.runtime import gemm as rt


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---- configs as int[] ------------------------------------------------------------------


@pytest.mark.parametrize("num_stages", [None, 1, 3])
def test_a_config_packs_to_its_fields_and_back(num_stages: int | None) -> None:
    config = S.GemmConfig(128, 64, 32, 8, 4, num_stages)
    packed = torch_ops._pack_config(config)
    assert packed == [128, 64, 32, 8, 4, num_stages or 0]
    assert torch_ops._unpack_config(packed) == config
    assert torch_ops._pack_config(None) is None
    assert torch_ops._unpack_config(None) is None


@pytest.mark.parametrize("packed", [[128, 64, 32, 8, 4], [128, 64, 32, 8, 4, 2, 1]])
def test_a_packed_config_of_another_length_is_refused(packed: list[int]) -> None:
    with pytest.raises(ValueError, match="zip"):
        torch_ops._unpack_config(packed)


# ---- the fused epilogue's scales ---------------------------------------------------------


@pytest.mark.parametrize("which", ["row", "col", "both"])
def test_one_scale_alone_is_applied(which: str) -> None:
    g = _gen()
    a = torch.randn(32, 64, generator=g).half()
    b = torch.randn(64, 32, generator=g).half()
    rs = torch.rand(32, generator=g) + 0.5 if which != "col" else None
    cs = torch.rand(32, generator=g) + 0.5 if which != "row" else None
    out = torch.ops.gemm_opt.matmul_epilogue(a, b, None, None, row_scale=rs, col_scale=cs)
    ref = a.double() @ b.double()
    if rs is not None:
        ref = ref * rs.double()[:, None]
    if cs is not None:
        ref = ref * cs.double()[None, :]
    # f16 output: half an ulp at |C| < 64 is 2^-5
    assert (out.double() - ref).abs().max().item() <= 2.0**-5


# ---- the on-disk kernel cache --------------------------------------------------------------


class _Installed(Exception):
    """Raised by the stand-in of ``disk_cache.install``."""


@pytest.fixture
def install(monkeypatch) -> None:
    def installed() -> None:
        raise _Installed

    monkeypatch.setattr(disk_cache, "install", installed)


def _call() -> torch.Tensor:
    g = _gen(1)
    a, b = torch.randn(16, 32, generator=g).half(), torch.randn(32, 16, generator=g).half()
    return torch_ops._run(
        "matmul", a, b, **torch_ops._kw("data-parallel", None, None, 1, None, None)
    )


@pytest.mark.parametrize(
    ("kind", "builder", "compiler", "installs"),
    [
        ("cuda", False, True, True),
        ("cuda", True, True, False),  # kernels build already
        ("cuda", False, False, False),  # nothing to build them with
        ("cpu", False, True, False),  # the model runs it
    ],
)
def test_a_cuda_call_without_a_builder_installs_the_disk_cache(
    monkeypatch, install, kind: str, builder: bool, compiler: bool, installs: bool
) -> None:
    monkeypatch.setattr(rt, "has_builder", lambda: builder)
    monkeypatch.setattr(rt, "compiler_installed", lambda: compiler)
    monkeypatch.setattr(torch_ops, "_safe_kind", lambda _: kind)
    if installs:
        with pytest.raises(_Installed):
            _call()
    else:
        assert _call().shape == (16, 16)


# ---- the backward runs with the forward's options --------------------------------------


@pytest.fixture
def calls(monkeypatch) -> list[tuple]:
    """The backward's operator calls (name and arguments), run as before."""
    seen: list[tuple] = []
    real = torch_ops._call

    def recording(name: str, *args):
        seen.append((name, *args))
        return real(name, *args)

    monkeypatch.setattr(torch_ops, "_call", recording)
    return seen


#: schedule, reduction, num_programs, num_xcds, config, seed of the forward
OPTIONS = ("persistent", None, 2, 1, None, 7)


def _grouped_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = _gen(2)
    a = torch.randn(48, 32, generator=g).half().requires_grad_()
    b = torch.randn(2, 32, 16, generator=g).half().requires_grad_()
    return a, b, torch.tensor([16, 32], dtype=torch.int32)


def test_grouped_backward_passes_the_forwards_options_on(calls: list[tuple]) -> None:
    a, b, lens = _grouped_inputs()
    out = torch.ops.gemm_opt.grouped_matmul(a, b, lens, False, *OPTIONS, None)
    out.sum().backward()
    names = [c[0] for c in calls]
    assert names == ["grouped_matmul", "grouped_matmul_variable_k"]
    assert calls[0][4:] == (True, *OPTIONS, None)  # dA: b read the other way round
    assert calls[1][4:] == (*OPTIONS, None)


def _variable_k_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = _gen(3)
    a = torch.randn(48, 16, generator=g).half().requires_grad_()
    b = torch.randn(48, 8, generator=g).half().requires_grad_()
    return a, b, torch.tensor([16, 32], dtype=torch.int32)


def test_variable_k_backward_passes_the_forwards_options_on(calls: list[tuple]) -> None:
    a, b, lens = _variable_k_inputs()
    out = torch.ops.gemm_opt.grouped_matmul_variable_k(a, b, lens, *OPTIONS, None)
    out.sum().backward()
    assert [c[0] for c in calls] == ["grouped_matmul", "grouped_matmul"]
    assert calls[0][4:] == (True, *OPTIONS, None)
    assert calls[1][4:] == (False, *OPTIONS, None)


def test_grouped_backward_of_a_alone_runs_only_dgrad(calls: list[tuple]) -> None:
    a, b, lens = _grouped_inputs()
    b.requires_grad_(False)
    torch.ops.gemm_opt.grouped_matmul(a, b, lens, False, *OPTIONS, None).sum().backward()
    assert [c[0] for c in calls] == ["grouped_matmul"]
    assert a.grad is not None and a.grad.shape == a.shape


def test_grouped_backward_of_b_alone_runs_only_wgrad(calls: list[tuple]) -> None:
    a, b, lens = _grouped_inputs()
    a.requires_grad_(False)
    torch.ops.gemm_opt.grouped_matmul(a, b, lens, False, *OPTIONS, None).sum().backward()
    assert [c[0] for c in calls] == ["grouped_matmul_variable_k"]
    assert b.grad is not None and b.grad.shape == b.shape


@pytest.mark.parametrize(
    ("op", "backward"),
    [
        ("grouped_matmul", torch_ops._grouped_backward),
        ("grouped_matmul_variable_k", torch_ops._variable_k_backward),
    ],
)
def test_a_backward_gives_one_gradient_per_operator_argument(op: str, backward) -> None:
    arguments = getattr(torch.ops.gemm_opt, op).default._schema.arguments
    ctx = SimpleNamespace(
        saved_tensors=(None, None, None),
        needs_input_grad=(False,) * len(arguments),
        trans_b=False,
        rest=OPTIONS,
    )
    grads = backward(ctx, torch.zeros(1))
    assert len(grads) == len(arguments)
    assert all(g is None for g in grads)


@pytest.mark.parametrize("which", [0, 1])
def test_variable_k_backward_runs_only_the_gradient_asked_for(
    calls: list[tuple], which: int
) -> None:
    inputs = _variable_k_inputs()
    inputs[1 - which].requires_grad_(False)
    torch.ops.gemm_opt.grouped_matmul_variable_k(*inputs, *OPTIONS, None).sum().backward()
    assert [(c[0], c[4]) for c in calls] == [("grouped_matmul", which == 0)]
    assert inputs[which].grad is not None and inputs[which].grad.shape == inputs[which].shape


# ---- matmul's backward ---------------------------------------------------------------------


@pytest.mark.parametrize("reduction", [None, "atomic"])
def test_the_backward_of_auto_resolves_auto_with_the_forwards_reduction_and_seed(reduction) -> None:
    assert torch_ops._backward_tail("auto", reduction, 5) == ("auto", reduction, None, 1, None, 5)


@pytest.mark.parametrize("schedule", ["data-parallel", "stream-k", "persistent"])
def test_the_backward_of_a_named_schedule_runs_the_default(schedule: str) -> None:
    assert torch_ops._backward_tail(schedule, "atomic", 5) == (
        "data-parallel",
        None,
        None,
        1,
        None,
        5,
    )


@pytest.mark.parametrize(
    ("k", "rows"),
    [(1, 8), (3, 8), (8, None), (16, None), (121, 128), (127, 128), (129, None), (136, None)],
)
def test_wgrad_pads_a_few_unaligned_tokens_to_the_alignment(k: int, rows: int | None) -> None:
    g = _gen(4)
    a, grad = torch.randn(k, 24, generator=g).half(), torch.randn(k, 40, generator=g).half()
    at, dc = torch_ops._wgrad_operands(a, grad)
    if rows is None:  # as they lie
        assert at.data_ptr() == a.data_ptr() and at.shape == (24, k)
        assert dc is grad
        return
    assert at.shape == (24, rows) and dc.shape == (rows, 40)
    assert torch.equal(at[:, :k], a.mT) and torch.equal(dc[:k], grad)
    assert not at[:, k:].any() and not dc[k:].any()


def _matmul_inputs(a_shape, b_shape) -> tuple[torch.Tensor, torch.Tensor]:
    g = _gen(5)
    a = torch.randn(*a_shape, generator=g).half().requires_grad_()
    b = torch.randn(*b_shape, generator=g).half().requires_grad_()
    return a, b


@pytest.mark.parametrize("which", [0, 1])
def test_matmul_backward_runs_only_the_gradient_asked_for(calls: list[tuple], which: int) -> None:
    inputs = _matmul_inputs((32, 16), (16, 24))
    inputs[1 - which].requires_grad_(False)
    torch.ops.gemm_opt.matmul(*inputs).sum().backward()
    assert [c[0] for c in calls] == ["matmul"]
    assert inputs[which].grad is not None and inputs[which].grad.shape == inputs[which].shape
    assert inputs[1 - which].grad is None


def _reference_grads(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a64 = a.detach().double().requires_grad_()
    b64 = b.detach().double().requires_grad_()
    torch.matmul(a64, b64).sum().backward()
    return a64.grad, b64.grad


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((3, 8, 16), (16, 24)), ((2, 8, 16), (1, 16, 24)), ((1, 8, 16), (2, 16, 24))],
)
def test_matmul_backward_of_batches_folds_or_sums_to_each_operand(a_shape, b_shape) -> None:
    a, b = _matmul_inputs(a_shape, b_shape)
    torch.ops.gemm_opt.matmul(a, b).sum().backward()
    da, db = _reference_grads(a, b)
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert (a.grad.double() - da).abs().max().item() <= 1e-2 * da.abs().max().item()
    assert (b.grad.double() - db).abs().max().item() <= 1e-2 * db.abs().max().item()


def test_matmul_backward_gives_one_gradient_per_operator_argument() -> None:
    arguments = torch.ops.gemm_opt.matmul.default._schema.arguments
    ctx = SimpleNamespace(
        saved_tensors=(None, None), needs_input_grad=(False,) * len(arguments), tail=()
    )
    grads = torch_ops._matmul_backward(ctx, torch.zeros(1))
    assert len(grads) == len(arguments) and all(g is None for g in grads)


# ---- the fused activations' derivatives ---------------------------------------------------

ACTIVATIONS = {
    "relu": torch.nn.functional.relu,
    "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
    "gelu-tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
}


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_activation_grad_is_the_derivative_of_the_activation(activation: str) -> None:
    x = torch.arange(-64, 65, dtype=torch.float64) / 16  # -4 to 4, 0 included, exact in f16
    x64 = x.clone().requires_grad_()
    ACTIVATIONS[activation](x64).sum().backward()
    got = torch_ops.activation_grad(x.half(), activation)
    assert got.dtype == torch.float32
    assert (got.double() - x64.grad).abs().max().item() <= 1e-5


@pytest.mark.parametrize("activation", [None, "none"])
def test_no_activation_has_a_derivative_of_one(activation: str | None) -> None:
    x = torch.linspace(-4, 4, 9).half()
    assert torch.equal(torch_ops.activation_grad(x, activation), torch.ones(9))


def test_an_activation_without_a_derivative_is_refused() -> None:
    with pytest.raises(ValueError, match="activation: no derivative for 'tanh'"):
        torch_ops.activation_grad(torch.zeros(2), "tanh")


# ---- the fused epilogue's backward -----------------------------------------------------------


def _act64(activation: str | None, pre: torch.Tensor) -> torch.Tensor:
    if activation in (None, "none"):
        return pre
    if activation == "swiglu":
        gate, up = pre.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up
    return ACTIVATIONS[activation](pre)


SCALES = ("none", "row", "col", "both")


def _close(got: torch.Tensor | None, want: torch.Tensor) -> None:
    assert got is not None and got.shape == want.shape
    assert (got.double() - want).abs().max().item() <= 2e-2 * want.abs().max().item() + 1e-3


@pytest.mark.parametrize(
    ("activation", "scales"),
    [(act, s) for act in (None, "relu", "silu", "gelu", "gelu-tanh") for s in SCALES]
    + [("swiglu", "none"), ("swiglu", "row")],  # swiglu takes no col_scale
)
def test_epilogue_backward_matches_float64_autograd(activation: str | None, scales: str) -> None:
    g = _gen(6)
    m, k, n = 32, 64, 32 if activation != "swiglu" else 64
    a = torch.randn(m, k, generator=g).half().requires_grad_()
    b = (torch.randn(k, n, generator=g) / 4).half().requires_grad_()
    bias = torch.randn(n, generator=g).half().requires_grad_()
    rs = torch.rand(m, generator=g) + 0.5 if scales in ("row", "both") else None
    cs = torch.rand(n, generator=g) + 0.5 if scales in ("col", "both") else None
    w = torch.randn(m, n // 2 if activation == "swiglu" else n, generator=g)
    out = torch.ops.gemm_opt.matmul_epilogue(a, b, bias, activation, row_scale=rs, col_scale=cs)
    (out.float() * w).sum().backward()

    a64, b64, bias64 = (t.detach().double().requires_grad_() for t in (a, b, bias))
    pre = a64 @ b64
    pre = pre if rs is None else pre * rs.double()[:, None]
    pre = pre if cs is None else pre * cs.double()
    (_act64(activation, pre + bias64) * w.double()).sum().backward()
    _close(a.grad, a64.grad)
    _close(b.grad, b64.grad)
    _close(bias.grad, bias64.grad)


def test_epilogue_backward_without_a_bias_gradient_gives_none_for_it() -> None:
    g = _gen(7)
    a = torch.randn(16, 32, generator=g).half().requires_grad_()
    b = torch.randn(32, 16, generator=g).half()
    bias = torch.randn(16, generator=g).half()
    torch.ops.gemm_opt.matmul_epilogue(a, b, bias, "relu").sum().backward()
    assert a.grad is not None and b.grad is None and bias.grad is None


@pytest.mark.parametrize("scale", ["row", "col"])
def test_epilogue_scales_take_no_gradient(scale: str) -> None:
    g = _gen(8)
    a = torch.randn(16, 32, generator=g).half().requires_grad_()
    b = torch.randn(32, 16, generator=g).half()
    s = (torch.rand(16, generator=g) + 0.5).requires_grad_()
    kw = {f"{scale}_scale": s}
    out = torch.ops.gemm_opt.matmul_epilogue(a, b, None, None, **kw)
    with pytest.raises(RuntimeError, match="row_scale and col_scale are not differentiable"):
        out.sum().backward()


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("activation", [None, "relu", "silu"])
def test_grouped_epilogue_backward_matches_float64_autograd(
    trans_b: bool, activation: str | None
) -> None:
    g = _gen(9)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    a = torch.randn(48, 32, generator=g).half().requires_grad_()
    shape = (2, 16, 32) if trans_b else (2, 32, 16)
    b = (torch.randn(*shape, generator=g) / 4).half().requires_grad_()
    bias = torch.randn(2, 16, generator=g).half().requires_grad_()
    w = torch.randn(48, 16, generator=g)
    out = torch.ops.gemm_opt.grouped_matmul_epilogue(a, b, lens, bias, activation, trans_b)
    (out.float() * w).sum().backward()

    a64, b64, bias64 = (t.detach().double().requires_grad_() for t in (a, b, bias))
    rows = []
    for i, (lo, hi) in enumerate(((0, 16), (16, 48))):
        bi = b64[i].mT if trans_b else b64[i]
        rows.append(_act64(activation, a64[lo:hi] @ bi + bias64[i]))
    (torch.cat(rows) * w.double()).sum().backward()
    _close(a.grad, a64.grad)
    _close(b.grad, b64.grad)
    _close(bias.grad, bias64.grad)


def test_grouped_epilogue_backward_without_a_bias_gradient_gives_none_for_it() -> None:
    g = _gen(10)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    a = torch.randn(48, 32, generator=g).half().requires_grad_()
    b = torch.randn(2, 32, 16, generator=g).half()
    bias = torch.randn(2, 16, generator=g).half()
    torch.ops.gemm_opt.grouped_matmul_epilogue(a, b, lens, bias, "relu").sum().backward()
    assert a.grad is not None and b.grad is None and bias.grad is None


@pytest.mark.parametrize(
    ("op", "backward", "ctx"),
    [
        (
            "matmul_epilogue",
            torch_ops._epilogue_backward,
            {"saved_tensors": (None,) * 5, "activation": None, "seed": None, "tail": ()},
        ),
        (
            "grouped_matmul_epilogue",
            torch_ops._grouped_epilogue_backward,
            {"saved_tensors": (None,) * 4, "activation": None, "trans_b": False, "rest": OPTIONS},
        ),
    ],
)
def test_an_epilogue_backward_gives_one_gradient_per_operator_argument(op, backward, ctx) -> None:
    arguments = getattr(torch.ops.gemm_opt, op).default._schema.arguments
    ctx = SimpleNamespace(needs_input_grad=(False,) * len(arguments), **ctx)
    grads = backward(ctx, torch.zeros(1, 1))
    assert len(grads) == len(arguments) and all(g is None for g in grads)


# ---- the API's scalar arguments ------------------------------------------------------------


def test_plain_ints_turns_numpy_integers_into_ints_and_leaves_the_rest() -> None:
    kw = {"num_programs": np.int64(4), "num_xcds": np.int32(2), "seed": None, "other": 1.5}
    got = torch_ops._plain_ints(kw)
    assert got == {"num_programs": 4, "num_xcds": 2, "seed": None, "other": 1.5}
    assert type(got["num_programs"]) is int and type(got["num_xcds"]) is int
    assert kw["num_programs"].dtype == np.int64  # the caller's dict is not changed
    odd = torch_ops._plain_ints({"num_programs": 2.5, "num_xcds": 1, "seed": "x"})
    assert odd == {"num_programs": 2.5, "num_xcds": 1, "seed": "x"}  # for the checks to name


# ---- eager calls that skip the dispatcher --------------------------------------------------


@pytest.mark.parametrize(
    ("supported", "compiling", "direct"),
    [(True, False, True), (True, True, False), (False, False, False), (False, True, False)],
)
def test_a_call_skips_the_dispatcher_only_where_supported_and_not_compiling(
    monkeypatch, supported: bool, compiling: bool, direct: bool
) -> None:
    """On the CPU as the device it would skip for (plain tensors, no gradient, no mode)."""
    monkeypatch.setattr(torch_ops, "_DIRECT_DEVICE", "cpu")
    monkeypatch.setattr(torch_ops, "_DIRECT_OK", supported)
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: compiling)
    if not torch_ops._dispatch_free():
        pytest.skip("this PyTorch lacks the checks the direct path needs")
    weight = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    assert torch_ops._direct(torch.zeros(2), weight) is direct


def test_epilogue_backward_recomputes_the_pre_activation_with_the_default_schedule(
    calls: list[tuple],
) -> None:
    g = _gen(11)
    a = torch.randn(16, 32, generator=g).half().requires_grad_()
    b, bias = torch.randn(32, 16, generator=g).half(), torch.randn(16, generator=g).half()
    rs = torch.rand(16, generator=g) + 0.5
    out = torch.ops.gemm_opt.matmul_epilogue(
        a, b, bias, "silu", "stream-k", None, 4, 1, None, 3, rs, None
    )
    out.sum().backward()
    recompute = calls[0]
    assert recompute[0] == "matmul_epilogue"
    assert recompute[4:] == (None, "data-parallel", None, None, 1, None, 3, rs, None)
    assert recompute[3] is bias


def test_epilogue_backward_gives_no_bias_gradient_unless_asked() -> None:
    g = _gen(12)
    a, b = torch.randn(16, 32, generator=g).half(), torch.randn(32, 16, generator=g).half()
    bias = torch.randn(16, generator=g).half()
    ctx = SimpleNamespace(
        saved_tensors=(a, b, bias, None, None),
        activation=None,
        seed=None,
        tail=torch_ops._backward_tail("data-parallel", None, None),
        needs_input_grad=(True,) + (False,) * 11,
    )
    grads = torch_ops._epilogue_backward(ctx, torch.ones(16, 16).half())
    assert grads[0] is not None and grads[0].shape == a.shape
    assert grads[1] is None and grads[2] is None


# ---- scaled_matmul's eager checks ----------------------------------------------------------


def _fp8_operands() -> tuple[torch.Tensor, torch.Tensor]:
    g = _gen(13)
    a = torch.randn(32, 64, generator=g).to(torch.float8_e4m3fn)
    w = torch.randn(32, 64, generator=g).to(torch.float8_e4m3fn)
    return a, w.t()  # B as the transposed view of a row-major (N, K) weight


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32, None])
def test_scaled_matmul_takes_a_torch_dtype_for_out_dtype(out_dtype) -> None:
    a, b = _fp8_operands()
    sa, sb = torch.tensor(0.5), torch.tensor(2.0)
    out = torch_ops.scaled_matmul(a, b, sa, sb, out_dtype=out_dtype)
    assert out.dtype == (out_dtype or torch.bfloat16)
    ref = a.double() @ b.double()
    assert (out.double() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()


@pytest.mark.parametrize("out_dtype", ["bf16", 16, torch.float8_e4m3fn.itemsize])
def test_scaled_matmul_refuses_an_out_dtype_that_is_no_torch_dtype(out_dtype) -> None:
    a, b = _fp8_operands()
    with pytest.raises(TypeError, match=r"^out_dtype: expected a torch.dtype, got "):
        torch_ops.scaled_matmul(a, b, torch.tensor(1.0), torch.tensor(1.0), out_dtype=out_dtype)


@pytest.mark.parametrize("which", ["scale_a", "scale_b"])
def test_scaled_matmul_takes_tensor_scales(which: str) -> None:
    a, b = _fp8_operands()
    scales = {"scale_a": torch.tensor(1.0), "scale_b": torch.tensor(1.0), which: 1.0}
    with pytest.raises(TypeError, match=f"^{which}: expected a float32 tensor, got float$"):
        torch_ops.scaled_matmul(a, b, scales["scale_a"], scales["scale_b"])


def test_grouped_epilogue_backward_passes_the_forwards_options_on(calls: list[tuple]) -> None:
    g = _gen(14)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    a = torch.randn(48, 32, generator=g).half().requires_grad_()
    b = torch.randn(2, 32, 16, generator=g).half().requires_grad_()
    bias = torch.randn(2, 16, generator=g).half()
    out = torch.ops.gemm_opt.grouped_matmul_epilogue(a, b, lens, bias, "silu", False, *OPTIONS)
    out.sum().backward()
    names = [c[0] for c in calls]
    assert names == ["grouped_matmul_epilogue", "grouped_matmul", "grouped_matmul_variable_k"]
    assert calls[0][5:] == (None, False, *OPTIONS, None)  # the recompute, bias fused
    assert calls[1][4:] == (True, *OPTIONS, None)
    assert calls[2][4:] == (*OPTIONS, None)


def test_variable_k_accumulate_adds_to_out() -> None:
    g = _gen(15)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    a, b = torch.randn(48, 16, generator=g).half(), torch.randn(48, 8, generator=g).half()
    out = torch.full((2, 16, 8), 0.5, dtype=torch.float16)
    torch.ops.gemm_opt.grouped_matmul_variable_k_accumulate(a, b, lens, out)
    ref = torch.stack([a[:16].double().mT @ b[:16].double(), a[16:].double().mT @ b[16:].double()])
    assert (out.double() - (ref + 0.5)).abs().max().item() <= 2e-2 * ref.abs().max().item()


# ---- FP8 training's argument checks -------------------------------------------------------


def _fp8_check(
    x=None, weight=None, recipe="rowwise", grad_recipe="rowwise", out=None, grouped=False
):
    x = torch.zeros(4, 32) if x is None else x
    if weight is None:
        weight = torch.zeros(2, 8, 32) if grouped else torch.zeros(8, 32)
    return torch_ops._check_fp8_training(x, weight, recipe, grad_recipe, out, grouped)


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("recipe", torch_ops.FP8_TRAINING_RECIPES)
def test_fp8_training_takes_every_recipe_and_writes_bf16_unless_told(recipe, grouped) -> None:
    assert _fp8_check(recipe=recipe, grad_recipe=recipe, grouped=grouped) == torch.bfloat16
    assert _fp8_check(out=torch.float32, grouped=grouped) == torch.float32
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        assert _fp8_check(x=torch.zeros(4, 32, dtype=dtype), grouped=grouped) == torch.bfloat16


@pytest.mark.parametrize("name", ["recipe", "grad_recipe"])
def test_fp8_training_refuses_an_unknown_recipe(name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}: an FP8 training GEMM quantizes with "):
        _fp8_check(**{name: "mxfp8"})


@pytest.mark.parametrize("name", ["x", "weight"])
def test_fp8_training_takes_high_precision_tensors(name: str) -> None:
    with pytest.raises(TypeError, match=rf"^{name}: expected a torch tensor, got list$"):
        _fp8_check(**{name: [[0.0]]})
    bad = torch.zeros(4, 32) if name == "x" else torch.zeros(8, 32)
    with pytest.raises(TypeError, match=rf"^{name}: expected high-precision elements"):
        _fp8_check(**{name: bad.to(torch.float8_e4m3fn)})


@pytest.mark.parametrize(
    ("grouped", "x_shape", "w_shape"),
    [
        (False, (4, 32, 1), (8, 32)),  # x 3-D
        (False, (4, 32), (2, 8, 32)),  # weight 3-D
        (False, (4, 32), (8, 16)),  # K differs
        (True, (4, 32), (8, 32)),  # a grouped weight is 3-D
        (True, (4, 32), (2, 8, 16)),
    ],
)
def test_fp8_training_refuses_shapes_that_do_not_multiply(grouped, x_shape, w_shape) -> None:
    what = r"\(G, N, K\)" if grouped else r"\(N, K\)"
    with pytest.raises(ValueError, match=rf"^weight: expected x \(M, K\) and weight {what} "):
        _fp8_check(x=torch.zeros(x_shape), weight=torch.zeros(w_shape), grouped=grouped)


@pytest.mark.parametrize("out", [torch.float16, torch.float8_e4m3fn])
def test_fp8_training_writes_bf16_or_f32_only(out) -> None:
    with pytest.raises(ValueError, match=r"^out_dtype: expected torch.bfloat16 or torch.float32"):
        _fp8_check(out=out)


def test_grouped_epilogue_backward_gives_no_bias_gradient_unless_asked() -> None:
    g = _gen(16)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    a = torch.randn(48, 32, generator=g).half()
    b, bias = torch.randn(2, 32, 16, generator=g).half(), torch.randn(2, 16, generator=g).half()
    ctx = SimpleNamespace(
        saved_tensors=(a, b, lens, bias),
        activation=None,
        trans_b=False,
        rest=OPTIONS,
        needs_input_grad=(True,) + (False,) * 12,
    )
    grads = torch_ops._grouped_epilogue_backward(ctx, torch.ones(48, 16).half())
    assert grads[0] is not None and grads[0].shape == a.shape
    assert grads[1] is None and grads[3] is None


def _fp8_close(got: torch.Tensor | None, want: torch.Tensor) -> None:
    """Within FP8's quantization error (e4m3 rounds to 2^-4 relative, e5m2 gradients 2^-3)."""
    assert got is not None and got.shape == want.shape
    assert (got.double() - want).abs().max().item() <= 0.15 * want.abs().max().item()


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_fp8_linear_backward_runs_the_gradients_asked_for(needs: tuple[bool, bool]) -> None:
    g = _gen(17)
    x = torch.randn(32, 64, generator=g).bfloat16().requires_grad_(needs[0])
    w = torch.randn(32, 64, generator=g).bfloat16().requires_grad_(needs[1])
    dy = torch.randn(32, 32, generator=g)
    y = torch.ops.gemm_opt.fp8_linear(x, w, "rowwise", "rowwise", None)
    (y.float() * dy).sum().backward()
    x64, w64 = x.detach().double(), w.detach().double()
    for t, want in ((x, dy.double() @ w64), (w, dy.double().mT @ x64)):
        if t.requires_grad:
            _fp8_close(t.grad, want)
            assert t.grad.dtype == t.dtype
        else:
            assert t.grad is None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_fp8_grouped_linear_backward_runs_the_gradients_asked_for(needs, dtype) -> None:
    g = _gen(18)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    x = torch.randn(48, 64, generator=g).to(dtype).requires_grad_(needs[0])
    w = torch.randn(2, 32, 64, generator=g).bfloat16().requires_grad_(needs[1])
    dy = torch.randn(48, 32, generator=g)
    y = torch.ops.gemm_opt.fp8_grouped_linear(x, w, lens, "rowwise", "rowwise", None)
    (y.float() * dy).sum().backward()
    x64, w64, dy64 = x.detach().double(), w.detach().double(), dy.double()
    dx = torch.cat([dy64[:16] @ w64[0], dy64[16:] @ w64[1]])
    dw = torch.stack([dy64[:16].mT @ x64[:16], dy64[16:].mT @ x64[16:]])
    for t, want in ((x, dx), (w, dw)):
        if t.requires_grad:
            _fp8_close(t.grad, want)
        else:
            assert t.grad is None


# ---- matmul_epilogue's entry point -----------------------------------------------------------

EPILOGUE_KW = {"schedule": "data-parallel", "reduction": None, "num_programs": None,
               "num_xcds": 1, "config": None, "seed": None}  # fmt: skip


def _epi(a, b, bias=None, activation=None, accumulate=False, out=None, **scales):
    return torch_ops.matmul_epilogue(
        a, b, bias=bias, activation=activation, accumulate=accumulate, out=out,
        **scales, **EPILOGUE_KW,
    )  # fmt: skip


def _ab(seed: int = 19) -> tuple[torch.Tensor, torch.Tensor]:
    g = _gen(seed)
    return torch.randn(16, 32, generator=g).half(), torch.randn(32, 16, generator=g).half()


@pytest.mark.parametrize("name", ["bias", "row_scale", "col_scale"])
def test_matmul_epilogue_takes_tensors_for_bias_and_scales(name: str) -> None:
    a, b = _ab()
    args = {name: [1.0] * 16}
    with pytest.raises(TypeError, match=rf"^{name}: expected a tensor like a, got list$"):
        _epi(a, b, **args)


@pytest.mark.parametrize("name", ["row_scale", "col_scale"])
def test_matmul_epilogue_refuses_a_scale_that_requires_grad(name: str) -> None:
    a, b = _ab()
    s = torch.ones(16).requires_grad_()
    with pytest.raises(RuntimeError, match=rf"^gemm_opt.matmul: {name} is not differentiable"):
        _epi(a, b, **{name: s})
    with torch.no_grad():
        assert _epi(a, b, **{name: s}).shape == (16, 16)
    assert _epi(a, b, **{name: s.detach()}).shape == (16, 16)


def test_matmul_epilogue_with_out_writes_and_accumulates() -> None:
    a, b = _ab()
    bias = torch.randn(16, generator=_gen(20)).half()
    ref = a.double() @ b.double() + bias.double()
    out = torch.full((16, 16), 0.5, dtype=torch.float16)
    assert _epi(a, b, bias, out=out) is out
    assert (out.double() - ref).abs().max().item() <= 2e-2
    out.fill_(0.5)
    assert _epi(a, b, accumulate=True, out=out) is out
    assert (out.double() - (a.double() @ b.double() + 0.5)).abs().max().item() <= 2e-2


def test_matmul_epilogue_with_out_refuses_inputs_that_require_grad() -> None:
    a, b = _ab()
    out = torch.empty(16, 16, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="out= is not differentiable"):
        _epi(a.requires_grad_(), b, out=out)


def test_matmul_epilogue_is_differentiable_in_a_b_and_bias() -> None:
    a, b = _ab()
    a.requires_grad_()
    bias = torch.randn(16, generator=_gen(21)).half().requires_grad_()
    _epi(a, b, bias, "relu").sum().backward()
    assert a.grad is not None and bias.grad is not None and b.grad is None


# ---- grouped_matmul_epilogue's entry point ---------------------------------------------------


def _gepi(a, b, lens, trans_b=False, bias=None, activation=None, accumulate=False, out=None):
    return torch_ops.grouped_matmul_epilogue(
        a, b, lens, trans_b=trans_b, validate=False, bias=bias, activation=activation,
        accumulate=accumulate, out=out, **{**EPILOGUE_KW, "schedule": "persistent"},
    )  # fmt: skip


def _grouped_ab() -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    g = _gen(22)
    return torch.randn(48, 32, generator=g).half(), torch.randn(2, 32, 16, generator=g).half(), [
        16, 32]  # fmt: skip


def _grouped_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cat([a[:16].double() @ b[0].double(), a[16:].double() @ b[1].double()])


def test_grouped_matmul_epilogue_takes_a_bool_trans_b_and_a_tensor_bias() -> None:
    a, b, lens = _grouped_ab()
    with pytest.raises(TypeError, match=r"^trans_b: expected a bool, got int$"):
        _gepi(a, b, lens, trans_b=1)
    with pytest.raises(TypeError, match=r"^bias: expected a tensor like a, got list$"):
        _gepi(a, b, lens, bias=[[0.0] * 16] * 2)


def test_grouped_matmul_epilogue_with_out_writes_and_accumulates() -> None:
    a, b, lens = _grouped_ab()
    bias = torch.randn(2, 16, generator=_gen(23)).half()
    ref = _grouped_ref(a, b)
    out = torch.full((48, 16), 0.5, dtype=torch.float16)
    assert _gepi(a, b, lens, bias=bias, out=out) is out
    with_bias = ref + torch.cat([bias[0].double().expand(16, 16), bias[1].double().expand(32, 16)])
    assert (out.double() - with_bias).abs().max().item() <= 2e-2
    out.fill_(0.5)
    assert _gepi(a, b, lens, accumulate=True, out=out) is out
    assert (out.double() - (ref + 0.5)).abs().max().item() <= 2e-2


def test_grouped_matmul_epilogue_with_out_refuses_inputs_that_require_grad() -> None:
    a, b, lens = _grouped_ab()
    out = torch.empty(48, 16, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="out= is not differentiable"):
        _gepi(a.requires_grad_(), b, lens, out=out)


def test_grouped_matmul_epilogue_is_differentiable_in_a_b_and_bias() -> None:
    a, b, lens = _grouped_ab()
    bias = torch.randn(2, 16, generator=_gen(24)).half().requires_grad_()
    b.requires_grad_()
    out = _gepi(a, b, lens, bias=bias, activation="relu")
    bias64 = torch.cat([bias[0].double().expand(16, 16), bias[1].double().expand(32, 16)])
    want = (_grouped_ref(a, b) + bias64).clamp(min=0)
    assert (out.double() - want).abs().max().item() <= 2e-2
    out.sum().backward()
    assert a.grad is None and b.grad is not None and bias.grad is not None


def _fp8_grouped_operands():
    g = _gen(25)
    a = torch.randn(48, 64, generator=g).to(torch.float8_e4m3fn)
    w = torch.randn(2, 32, 64, generator=g).to(torch.float8_e4m3fn)
    return a, w, torch.tensor([16, 32], dtype=torch.int32)  # b (G, N, K), trans_b


@pytest.mark.parametrize(
    ("out_dtype", "ok"), [(torch.float32, True), (None, True), ("bf16", False)]
)
def test_scaled_grouped_matmul_takes_a_torch_dtype_for_out_dtype(out_dtype, ok: bool) -> None:
    a, b, lens = _fp8_grouped_operands()
    sa, sb = torch.tensor(0.5), torch.tensor(2.0)

    def call() -> torch.Tensor:
        return torch_ops.scaled_grouped_matmul(
            a, b, lens, sa, sb, trans_b=True, validate=False, out_dtype=out_dtype
        )

    if not ok:
        with pytest.raises(TypeError, match=r"^out_dtype: expected a torch.dtype, got 'bf16'$"):
            call()
        return
    out = call()
    assert out.dtype == (out_dtype or torch.bfloat16)
    ref = torch.cat([a[:16].double() @ b[0].double().mT, a[16:].double() @ b[1].double().mT])
    assert (out.double() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()


def test_fp8_training_wants_the_weight_on_xs_device() -> None:
    with pytest.raises(ValueError, match=r"^weight: expected a tensor on cpu \(x's\), got meta$"):
        _fp8_check(weight=torch.zeros(8, 32, device="meta"))


# ---- fake CUDA tensors: the eager checks read metadata only --------------------------------


def _fake_cuda(*shape: int, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device="cuda")


def test_fake_cuda_epilogue_calls_check_without_reading_data() -> None:
    """Traced (fake CUDA tensors, no GPU): each entry point's eager check is the meta plan,
    which reads no data pointer and no GPU property, and gives the output's metadata."""
    with FakeTensorMode():
        x, d = _fake_cuda(64, 32), _fake_cuda(32, 48)
        bias, out = _fake_cuda(48), _fake_cuda(64, 48)
        w, wbias = _fake_cuda(4, 32, 48), _fake_cuda(4, 48)
        lens = _fake_cuda(4, dtype=torch.int32)
        y = torch_ops.matmul_epilogue(
            x, d, bias=bias, activation="relu", accumulate=False, out=None, **EPILOGUE_KW
        )
        assert (y.shape, y.dtype, y.device.type) == ((64, 48), torch.bfloat16, "cuda")
        got = torch_ops.matmul_epilogue(
            x, d, bias=bias, activation=None, accumulate=True, out=out, **EPILOGUE_KW
        )
        assert got is out
        grouped = {**EPILOGUE_KW, "schedule": "persistent"}
        y = torch_ops.grouped_matmul_epilogue(
            x, w, lens, trans_b=False, validate=False, bias=wbias, activation="silu",
            accumulate=False, out=None, **grouped,
        )  # fmt: skip
        assert y.shape == (64, 48)
        wgrad = _fake_cuda(4, 32, 48)
        got = torch_ops.grouped_matmul_variable_k(
            x, out, lens, validate=False, accumulate=True, out=wgrad, **grouped
        )
        assert got is wgrad


def test_fake_cuda_scaled_calls_check_without_reading_data() -> None:
    with FakeTensorMode():
        a = _fake_cuda(64, 32, dtype=torch.float8_e4m3fn)
        s = _fake_cuda(dtype=torch.float32)
        b = _fake_cuda(48, 32, dtype=torch.float8_e4m3fn).t()
        y = torch_ops.scaled_matmul(a, b, s, s, out_dtype=torch.float32)
        assert (y.shape, y.dtype, y.device.type) == ((64, 48), torch.float32, "cuda")
        w = _fake_cuda(4, 48, 32, dtype=torch.float8_e4m3fn)
        lens = _fake_cuda(4, dtype=torch.int32)
        y = torch_ops.scaled_grouped_matmul(a, w, lens, s, s, trans_b=True, validate=False)
        assert (y.shape, y.dtype) == ((64, 48), torch.bfloat16)


def test_fake_cuda_epilogue_calls_name_bad_input_eagerly() -> None:
    """The meta plan's messages, before the operator is called."""
    with FakeTensorMode():
        x, d = _fake_cuda(64, 32), _fake_cuda(32, 48)
        with pytest.raises(ValueError, match=r"^bias: "):
            torch_ops.matmul_epilogue(
                x, d, bias=_fake_cuda(47), activation=None, accumulate=False, out=None,
                **EPILOGUE_KW,
            )  # fmt: skip
        with pytest.raises(ValueError, match=r"^out: expected shape \(64, 48\)"):
            torch_ops.matmul_epilogue(
                x, d, bias=None, activation=None, accumulate=True, out=_fake_cuda(64, 47),
                **EPILOGUE_KW,
            )  # fmt: skip


# ---- the direct path (eager, no dispatcher) -------------------------------------------------


@pytest.fixture
def direct_on_cpu(monkeypatch) -> None:
    """CPU tensors take the path of plain CUDA ones (no dispatch); the model runs them."""
    monkeypatch.setattr(torch_ops, "_DIRECT_DEVICE", "cpu")
    if not torch_ops._DIRECT_OK:
        pytest.skip("this PyTorch lacks the checks the direct path needs")


def test_a_direct_epilogue_call_bumps_outs_version_as_the_operator_does(direct_on_cpu) -> None:
    a, b = _ab()
    bias = torch.randn(16, generator=_gen(26)).half()
    assert torch_ops._direct(a, b, bias)
    assert _epi(a, b, bias, "relu").shape == (16, 16)  # no out: nothing to bump
    out = torch.zeros(16, 16, dtype=torch.float16)
    version = out._version
    assert _epi(a, b, bias, out=out) is out
    assert out._version > version, "out= is a mutated argument: its version moves"
    assert (out.double() - (a.double() @ b.double() + bias.double())).abs().max() <= 2e-2
    rs, cs = torch.rand(16, generator=_gen(29)) + 0.5, torch.rand(16, generator=_gen(30)) + 0.5
    scaled = _epi(a, b, row_scale=rs, col_scale=cs)  # the scales reach the kernel
    ref = a.double() @ b.double() * rs.double()[:, None] * cs.double()
    assert (scaled.double() - ref).abs().max().item() <= 2.0**-5


def test_a_direct_grouped_epilogue_call_bumps_outs_version(direct_on_cpu) -> None:
    a, b, lens = _grouped_ab()
    bias = torch.randn(2, 16, generator=_gen(27)).half()
    assert _gepi(a, b, lens, bias=bias, activation="relu").shape == (48, 16)
    out = torch.zeros(48, 16, dtype=torch.float16)
    version = out._version
    assert _gepi(a, b, lens, accumulate=True, out=out) is out
    assert out._version > version
    assert (out.double() - _grouped_ref(a, b)).abs().max().item() <= 2e-2


def test_a_grouped_epilogue_bias_that_requires_grad_is_not_taken_direct(direct_on_cpu) -> None:
    """The bias is one of the call's tensors: its gradient is recorded (eager autograd),
    as a's and b's are."""
    a, b, lens = _grouped_ab()
    bias = torch.randn(2, 16, generator=_gen(31)).half().requires_grad_()
    out = _gepi(a, b, lens, bias=bias)
    assert out.requires_grad
    out.sum().backward()
    want = torch.tensor([[16.0] * 16, [32.0] * 16])  # d(sum)/d(bias[g]): the group's rows
    assert bias.grad is not None and torch.equal(bias.grad.float(), want)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("_C", "_is_torch_function_mode_enabled"),
        ("_C", "_len_torch_dispatch_stack"),
        ("autograd.graph", "increment_version"),
    ],
)
def test_a_pytorch_without_one_check_dispatches_every_call(monkeypatch, module, name) -> None:
    assert torch_ops._dispatch_free()
    owner = torch
    for part in module.split("."):
        owner = getattr(owner, part)
    monkeypatch.delattr(owner, name)
    assert not torch_ops._dispatch_free()


# ---- the kernels the wrappers pick where the caller names none --------------------------------


@pytest.fixture
def scaled_specs(monkeypatch) -> list:
    """The kernel specs of the scaled GEMMs the model runs."""
    from gemm_opt.kernels import model_gemm

    seen: list = []
    real = model_gemm.run_scaled

    def recording(p, *args, **kwargs):
        seen.append(p.spec)
        return real(p, *args, **kwargs)

    monkeypatch.setattr(model_gemm, "run_scaled", recording)
    return seen


@pytest.mark.parametrize("num_xcds", [None, 2])
def test_scaled_matmul_runs_the_kernel_of_its_eager_plan(scaled_specs, num_xcds) -> None:
    """A work-stealing kernel is compiled for its num_xcds (the chiplets its counters
    split the tiles over): one not given is 1, the kernel of the eager plan."""
    from gemm_opt.runtime import scaled

    a, b = _fp8_operands()
    sa, sb = torch.tensor(0.5), torch.tensor(2.0)
    kw = {"schedule": "work-stealing"} | ({} if num_xcds is None else {"num_xcds": num_xcds})
    torch_ops.scaled_matmul(a, b, sa, sb, **kw)
    want = scaled.scaled_plan(a, b, sa, sb, meta=True, **kw).spec
    assert [s.num_xcds for s in scaled_specs] == [num_xcds or 1]
    assert scaled_specs[0].name == want.name


def test_the_fp8_training_wrappers_check_their_own_weight_rank() -> None:
    """``torch_ops.fp8_linear`` takes an (N, K) weight, ``fp8_grouped_linear`` a (G, N, K)
    one: each checks eagerly, with the operator's message, before the operator runs."""
    g = _gen(32)
    x = torch.randn(48, 64, generator=g).bfloat16()
    w = torch.randn(32, 64, generator=g).bfloat16()
    y = torch_ops.fp8_linear(x, w)
    _fp8_close(y, x.double() @ w.double().mT)
    lens = torch.tensor([16, 32], dtype=torch.int32)
    wg = torch.stack([w, -w])
    y = torch_ops.fp8_grouped_linear(x, wg, lens)
    want = torch.cat([x[:16].double() @ w.double().mT, -(x[16:].double() @ w.double().mT)])
    _fp8_close(y, want)
    with pytest.raises(ValueError, match=r"^weight: expected x \(M, K\) and weight \(N, K\) "):
        torch_ops.fp8_linear(x, wg)
    with pytest.raises(ValueError, match=r"^weight: expected x \(M, K\) and weight \(G, N, K\) "):
        torch_ops.fp8_grouped_linear(x, w, lens)
