"""The ``torch.ops.gemm_opt`` operators: registration, fake and autograd implementations,
``torch.compile(fullgraph=True)``, and a CUDA path that never reads device data.

What needs a GPU (compiled kernels under inductor, CUDA graphs, streams) is
``benchmarks/h100/torch_ops.py``; its MoE block is the one compiled here, on
the model (CPU tensors), with ``aot_eager``. The CUDA path's host logic runs
here on CPU tensors standing in for CUDA ones (the launch recorded instead of
made) with every host read of tensor data patched to fail.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import torch
from support.scripts import load_script
from torch._subclasses.fake_tensor import FakeTensorMode

import gemm_opt
from gemm_opt import api, torch_ops
from gemm_opt.core import schedules as S
from gemm_opt.kernels import build_bundles
from gemm_opt.kernels import h100_configs as h100
from gemm_opt.runtime import gemm as rt
from gemm_opt.runtime import plan as P

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = load_script(ROOT / "benchmarks" / "h100" / "torch_ops.py", "h100_torch_ops")
OPS = (
    "matmul",
    "matmul_out",
    "grouped_matmul",
    "grouped_matmul_out",
    "grouped_matmul_variable_k",
    "grouped_matmul_variable_k_out",
)


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_the_operators_are_registered_with_their_schemas() -> None:
    for name in OPS:
        schema = str(getattr(torch.ops.gemm_opt, name).default._schema)
        assert schema.startswith(f"gemm_opt::{name}(Tensor a, Tensor b"), schema
        assert "Int[]? config=None" in schema and "Int? seed=None" in schema
        assert ("!) out," in schema) == name.endswith("_out"), schema
    grouped = str(torch.ops.gemm_opt.grouped_matmul.default._schema)
    assert "Tensor group_lens, bool trans_b=False" in grouped
    assert 'str schedule="persistent"' in grouped and "str? validate=None" in grouped
    assert torch.Tag.needs_fixed_stride_order in torch.ops.gemm_opt.matmul.default.tags


@pytest.mark.parametrize(
    "name,shapes",
    [
        ("matmul", ((24, 32), (32, 16))),
        ("grouped_matmul", ((24, 32), (3, 32, 16))),
        ("grouped_matmul_variable_k", ((24, 32), (24, 16))),
    ],
)
def test_opcheck_schema_fake_autograd_and_aot_dispatch(name, shapes) -> None:
    """torch.library.opcheck: schema, fake implementation against the real one, the
    autograd registration, and AOT dispatch with dynamic shapes (CPU: the model)."""
    g = _gen(1)
    args = [torch.randn(*s, generator=g).half().requires_grad_() for s in shapes]
    if name != "matmul":
        args.append(torch.tensor([10, 0, 14], dtype=torch.int32))
    result = torch.library.opcheck(getattr(torch.ops.gemm_opt, name).default, tuple(args))
    assert set(result.values()) == {"SUCCESS"}, result


def test_out_operators_write_out_and_return_it() -> None:
    g = _gen(2)
    a, b = torch.randn(20, 32, generator=g).half(), torch.randn(32, 24, generator=g).half()
    out = torch.full((20, 24), float("nan"), dtype=torch.float16)
    assert gemm_opt.matmul(a, b, out=out) is out
    assert torch.equal(out, gemm_opt.matmul(a, b))
    lens = torch.tensor([7, 13])
    w = torch.randn(2, 32, 24, generator=g).half()
    out = torch.empty(20, 24, dtype=torch.float16)
    assert gemm_opt.grouped_matmul(a, w, lens, out=out) is out
    assert torch.equal(out, gemm_opt.grouped_matmul(a, w, lens))
    out = torch.empty(2, 32, 24, dtype=torch.float16)
    y = torch.randn(20, 24, generator=g).half()
    assert gemm_opt.grouped_matmul_variable_k(a, y, [7, 13], out=out) is out
    assert torch.equal(out, gemm_opt.grouped_matmul_variable_k(a, y, [7, 13]))
    result = torch.library.opcheck(
        torch.ops.gemm_opt.matmul_out.default, (a, b, torch.empty(20, 24, dtype=torch.float16))
    )
    assert set(result.values()) == {"SUCCESS"}, result
    with pytest.raises(RuntimeError, match=r"gemm_opt.matmul: out= is not differentiable"):
        gemm_opt.matmul(a.requires_grad_(), b, out=torch.empty(20, 24, dtype=torch.float16))
    with torch.no_grad():
        gemm_opt.matmul(a, b, out=torch.empty(20, 24, dtype=torch.float16))


def test_matmul_backward_runs_the_grouped_kernels_and_matches_float64() -> None:
    g = _gen(3)
    a = torch.randn(40, 64, generator=g).half().requires_grad_()
    b = torch.randn(64, 24, generator=g).half().requires_grad_()
    dy = torch.randn(40, 24, generator=g).half()
    gemm_opt.matmul(a, b).backward(dy)
    a64, b64, dy64 = (t.detach().double() for t in (a, b, dy))
    for got, want, k in ((a.grad, dy64 @ b64.T, 24), (b.grad, a64.T @ dy64, 40)):
        mag = (dy64.abs() @ b64.abs().T) if got is a.grad else (a64.abs().T @ dy64.abs())
        bound = 2 * 2.0**-11 * want.abs() + (k + 2) * 2.0**-23 * mag + 2.0**-24
        assert ((got.double() - want).abs() <= bound).all()


# ---- torch.compile -----------------------------------------------------------------------


def test_moe_block_compiles_to_one_graph_and_equals_eager() -> None:
    """The GPU script's MoE block (top-1 routing, group_lens counted on the device,
    GateUp, SwiGLU, Down, a dense shared expert), fullgraph, forward and backward."""
    import torch._dynamo.testing as dt

    torch._dynamo.reset()
    w = SCRIPT.make_weights(32, 32, 4, torch.float16, "cpu", seed=2)
    x = torch.randn(48, 32, generator=_gen(4)).half()
    dy = torch.randn(48, 32, generator=_gen(5))
    eager = SCRIPT.run_block(SCRIPT.moe_block, x, w, dy)
    counter = dt.CompileCounterWithBackend("aot_eager")
    got = SCRIPT.run_block(
        torch.compile(SCRIPT.moe_block, backend=counter, fullgraph=True), x, w, dy
    )
    assert counter.frame_count == 1
    targets = [str(n.target) for gm in counter.graphs for n in gm.graph.nodes]
    assert targets.count("gemm_opt.grouped_matmul") == 2 and "gemm_opt.matmul" in targets
    assert sorted(eager[1].tolist()) != [0, 0, 0, 48], "the routing splits the tokens"
    for name, c, e in zip(SCRIPT.GRAD_NAMES, got, eager, strict=True):
        assert torch.equal(c, e), name  # aot_eager runs the same kernels: bitwise equal
    ref = SCRIPT.moe_reference(x, w)
    err = (eager[0].detach().float() - ref).abs().max() / ref.abs().max()
    assert float(err) <= SCRIPT.REF_TOL


def test_token_counts_stay_symbolic_one_graph_for_every_count() -> None:
    """The fake implementations keep symbolic sizes (no int() specialization): one
    graph serves every token count under dynamic shapes."""
    import torch._dynamo.testing as dt

    torch._dynamo.reset()
    counter = dt.CompileCounterWithBackend("aot_eager")

    @torch.compile(backend=counter, fullgraph=True, dynamic=True)
    def f(x, w, lens):
        y = gemm_opt.grouped_matmul(x, w, lens)
        return y, gemm_opt.grouped_matmul_variable_k(x, y, lens), gemm_opt.matmul(x, w[0])

    w = torch.randn(2, 32, 16, generator=_gen(9)).half()
    for t in (40, 56, 72):
        x = torch.randn(t, 32, generator=_gen(t)).half()
        lens = torch.tensor([t - 8, 8])
        want = (
            gemm_opt.grouped_matmul(x, w, lens),
            gemm_opt.grouped_matmul_variable_k(x, gemm_opt.grouped_matmul(x, w, lens), lens),
            gemm_opt.matmul(x, w[0]),
        )
        for got, ref in zip(f(x, w, lens), want, strict=True):
            assert torch.equal(got, ref)
    assert counter.frame_count == 1


def test_schedule_auto_traces_without_picking_and_runs_the_pick() -> None:
    """The fake implementation does not resolve 'auto' (the output shape does not depend
    on it); the real one does, forward and backward (dgrad and wgrad resolve their own)."""
    g = _gen(10)
    a = torch.randn(40, 32, generator=g).half().requires_grad_()
    w = torch.randn(2, 32, 16, generator=g).half().requires_grad_()
    lens = torch.tensor([30, 10])
    torch._dynamo.reset()

    def f(a, w, lens):
        return gemm_opt.grouped_matmul(a, w, lens, schedule="auto"), gemm_opt.matmul(
            a, w[0], schedule="auto"
        )

    y, z = torch.compile(f, backend="aot_eager", fullgraph=True)(a, w, lens)
    (y.float().sum() + z.float().sum()).backward()
    ya, za = (t.detach() for t in f(a.detach(), w.detach(), lens))
    assert torch.equal(y, ya) and torch.equal(z, za)
    assert a.grad.shape == a.shape and w.grad.shape == w.shape


def test_a_bad_call_fails_at_trace_time_with_the_eager_message() -> None:
    def f(x, w, lens):
        return gemm_opt.grouped_matmul(x, w, lens)

    x, lens = torch.zeros(8, 16, dtype=torch.float16), torch.tensor([4, 4])
    w = torch.zeros(2, 12, 4, dtype=torch.float16)
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"b: expected shape \(G, K, N\) with K = 16"):
        torch.compile(f, backend="aot_eager", fullgraph=True)(x, w, lens)


def test_fake_cuda_tensors_trace_with_the_gpu_checks_and_read_nothing() -> None:
    """Fake CUDA tensors (no GPU needed): output metadata, and the GPU path's metadata
    checks of group_lens (dtype, rank, count), at trace time."""
    with FakeTensorMode():
        x = torch.empty(64, 32, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(4, 32, 48, dtype=torch.bfloat16, device="cuda")
        lens = torch.empty(4, dtype=torch.int32, device="cuda")
        y = gemm_opt.grouped_matmul(x, w, lens)
        assert (y.shape, y.dtype, y.device.type) == ((64, 48), torch.bfloat16, "cuda")
        d = gemm_opt.grouped_matmul(y, w, lens, trans_b=True)
        assert d.shape == (64, 32)
        assert gemm_opt.grouped_matmul_variable_k(x, y, lens).shape == (4, 32, 48)
        dense = torch.empty(32, 48, dtype=torch.bfloat16, device="cuda")
        assert gemm_opt.matmul(x, dense, schedule="stream-k").shape == (64, 48)
        for bad, exc, match in [
            (lens.float(), TypeError, r"group_lens: expected int32 or int64 elements"),
            (
                torch.empty(3, dtype=torch.int32, device="cuda"),
                ValueError,
                r"expected 4 lengths \(one per group of b\), got 3",
            ),
            (
                torch.empty(2, 2, dtype=torch.int64, device="cuda"),
                ValueError,
                r"group_lens: expected a 1-D tensor",
            ),
        ]:
            with pytest.raises(exc, match=match):
                gemm_opt.grouped_matmul(x, w, bad)
        with pytest.raises(ValueError, match=r"seed chooses the model's interleaving"):
            gemm_opt.matmul(x, dense, seed=1)


# ---- the CUDA path reads no device data --------------------------------------------------

HOST_READS = ("tolist", "item", "cpu", "numpy", "__bool__", "__int__", "__index__", "__float__")


class HostRead(AssertionError):
    pass


@pytest.fixture
def cuda_stand_in(monkeypatch):
    """CPU tensors taken for CUDA ones: the API's GPU path runs up to the launch, which
    is recorded; any host read of tensor data raises HostRead."""
    kind_of = P.kind_of

    def as_cuda(x, name):
        kind = kind_of(x, name)
        return "cuda" if kind == "torch-cpu" else kind

    launches: list[dict] = []

    def launch(spec, values, *, num_programs, total_tiles, target="cuda:90", prepare=None):
        launches.append(dict(values, spec=spec, P=num_programs, tiles=total_tiles))
        values["c"].zero_()  # what a kernel writes: on the device
        if prepare is None:
            return None
        first = dict(values, spec=spec, P=num_programs, tiles=total_tiles, prepared=True)

        def prepared(*tensors):  # rt.Prepared: the first call's launch on new tensors
            launches.append({**first, **dict(zip(prepare, tensors, strict=True))})
            tensors[-1].zero_()

        return prepared

    monkeypatch.setattr(P, "kind_of", as_cuda)
    monkeypatch.setattr(rt, "launch", launch)
    monkeypatch.setattr(rt, "resident_programs", lambda spec, device, target="cuda:90": 132)
    monkeypatch.setattr(rt, "sm_count", lambda torch, device: 132)

    def forbid(name):
        def read(self, *args, **kwargs):
            raise HostRead(f"Tensor.{name} on the CUDA path: a host read of device data")

        return read

    for name in HOST_READS:
        monkeypatch.setattr(torch.Tensor, name, forbid(name))
    return launches


def test_the_cuda_path_never_reads_device_data(cuda_stand_in) -> None:
    """Grouped forward, dgrad and wgrad (autograd), matmul and its backward, and the MoE
    block, with group_lens on the 'device': launched with the lengths tensor itself,
    grids sized without the lengths."""
    launches = cuda_stand_in
    g = _gen(6)
    x = torch.randn(300, 64, generator=g).half().requires_grad_()
    w = torch.randn(4, 64, 48, generator=g).half().requires_grad_()
    lens = torch.tensor([100, 0, 150, 50], dtype=torch.int32)
    y = gemm_opt.grouped_matmul(x, w, lens)
    y.backward(torch.ones_like(y))
    kinds = [(d["spec"].grouped, d["spec"].trans_b) for d in launches]
    assert kinds == [("m", False), ("m", True), ("k", False)], kinds
    assert all(d["group_lens"] is lens for d in launches), "the tensor itself, not a copy"
    spec = launches[0]["spec"]  # the shape class's config (config=None)
    assert spec.block_m == api.GPU_CONFIGS[h100.gpu_config_name(300, 48, "m", 132)].block_m
    bm, bn = spec.block_m, spec.block_n
    bound = S.grouped_tiles_bound("m", 4, rows=300, m=0, n=48, block_m=bm, block_n=bn)
    assert launches[0]["tiles"] == bound == (300 + 4 * (bm - 1)) // bm * -(-48 // bn)
    launches.clear()
    gemm_opt.grouped_matmul(x, w, lens.long(), validate="device")  # int64: cast on the device
    assert launches[0]["group_lens"].dtype == torch.int32
    b = torch.randn(64, 40, generator=g).half().requires_grad_()
    for kind in S.KINDS:
        gemm_opt.matmul(x.detach(), b.detach(), schedule=kind)
    gemm_opt.matmul(x, b).sum().backward()
    w_ = SCRIPT.make_weights(64, 32, 4, torch.float16, "cpu", seed=7)
    SCRIPT.run_block(SCRIPT.moe_block, x, w_, torch.ones(300, 64))
    bundled = {spec.name for spec in build_bundles.bundle_specs()}
    missing = {d["spec"].name for d in launches} - bundled
    assert not missing, f"the GPU script would launch kernels the bundles lack: {missing}"


def test_validate_true_is_the_host_check_and_device_is_an_assertion(
    cuda_stand_in, monkeypatch
) -> None:
    x = torch.zeros(8, 16, dtype=torch.float16)
    w = torch.zeros(2, 16, 4, dtype=torch.float16)
    lens = torch.tensor([3, 4], dtype=torch.int32)  # sums to 7, not 8
    gemm_opt.grouped_matmul(x, w, lens)  # validate=False: values are not read
    with pytest.raises(HostRead):
        gemm_opt.grouped_matmul(x, w, lens, validate=True)  # the opt-in host read
    asserted = []
    monkeypatch.setattr(torch, "_assert_async", lambda cond, msg: asserted.append(msg))
    gemm_opt.grouped_matmul_variable_k(x, x, lens, validate="device")
    assert asserted == ["gemm_opt: group_lens must be >= 0 and sum to 8 (the rows of a)"]
    with pytest.raises(ValueError, match=r"validate must be False, True .* or 'device'"):
        gemm_opt.grouped_matmul(x, w, lens, validate="yes")


@pytest.mark.parametrize(
    "lens,match",
    [([3, 4], "sum to 7, but a has 8 rows"), ([9, -1], r"group_lens\[1\] is -1")],
)
def test_validate_catches_bad_lengths_on_the_host_and_on_the_device(monkeypatch, lens, match):
    monkeypatch.setattr(P, "kind_of", lambda x, n: "cuda" if x.device.type == "cpu" else "numpy")
    monkeypatch.setattr(rt, "launch", lambda *a, **k: None)
    monkeypatch.setattr(rt, "resident_programs", lambda *a, **k: 132)
    x = torch.zeros(8, 16, dtype=torch.float16)
    w = torch.zeros(2, 16, 4, dtype=torch.float16)
    t = torch.tensor(lens, dtype=torch.int32)
    with pytest.raises(ValueError, match=match):
        gemm_opt.grouped_matmul(x, w, t, validate=True)
    with pytest.raises(RuntimeError, match="group_lens must be >= 0 and sum to 8"):
        gemm_opt.grouped_matmul(x, w, t, validate="device")  # on CPU the assertion is eager


def _calls(tree: ast.AST) -> set[str]:
    return {
        n.func.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }


def test_the_launch_path_has_no_host_read_in_its_source() -> None:
    """Static: the launcher modules, the operators and the API's GPU launch read no
    tensor data on the host and never synchronize."""
    banned = {"item", "tolist", "cpu", "numpy", "synchronize"}
    for path in (rt.__file__, rt.Kernel.__module__, torch_ops.__file__):
        mod = path if path.endswith(".py") else __import__(path, fromlist=["_"]).__file__
        found = _calls(ast.parse(Path(mod).read_text())) & banned
        assert not found, (mod, found)
    src = inspect.getsource(P.launch)
    assert not _calls(ast.parse(src)) & banned


# ---- the GPU script ----------------------------------------------------------------------


def test_the_gpu_script_refuses_to_run_without_a_gpu(capsys) -> None:
    assert SCRIPT.main([]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


def test_the_gpu_script_partitions_cover_the_tokens() -> None:
    g = _gen(8)
    seen_empty = seen_all = False
    for _ in range(200):
        lens = SCRIPT._partition(512, 8, g)
        assert len(lens) == 8 and sum(lens) == 512 and min(lens) >= 0
        seen_empty |= 0 in lens
        seen_all |= 512 in lens
    assert seen_empty and seen_all


@pytest.fixture
def direct_on_cpu(monkeypatch, cuda_stand_in):
    """Eager calls on the CUDA stand-in's tensors may skip the dispatcher (as on a GPU);
    counts the operators the dispatcher runs."""
    monkeypatch.setattr(torch_ops, "_DIRECT_DEVICE", "cpu")
    dispatched: list[str] = []
    real = torch_ops._op_args

    def op_args(a, b, kw, eager_check):
        dispatched.append(kw["schedule"])
        return real(a, b, kw, eager_check)

    monkeypatch.setattr(torch_ops, "_op_args", op_args)
    return cuda_stand_in, dispatched


def test_eager_calls_skip_the_dispatcher_only_where_it_adds_nothing(direct_on_cpu) -> None:
    """Plain eager calls launch without the operator; a call needing a gradient, a torch
    function or dispatch mode, or the profiler goes through ``torch.ops``."""
    launches, dispatched = direct_on_cpu
    g = _gen(11)
    a = torch.randn(64, 32, generator=g).half()
    b = torch.randn(32, 48, generator=g).half()
    lens = torch.tensor([40, 0, 24], dtype=torch.int32)
    w = torch.randn(3, 32, 48, generator=g).half()
    gemm_opt.matmul(a, b)
    gemm_opt.grouped_matmul(a, w, lens)
    gemm_opt.grouped_matmul_variable_k(a, torch.randn(64, 16, generator=g).half(), lens)
    out = torch.empty(64, 48, dtype=torch.float16)
    version = out._version
    assert gemm_opt.matmul(a, b, out=out) is out
    assert out._version > version, "out= bumps the version counter as the operator does"
    assert len(launches) == 4 and dispatched == [], dispatched
    assert torch_ops._direct(a, b)

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert not torch_ops._direct(a, b)
    from torch.utils._python_dispatch import TorchDispatchMode

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Dispatch():
        assert not torch_ops._direct(a, b)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert not torch_ops._direct(a, b)
    x = a.clone().requires_grad_()
    assert not torch_ops._direct(x, b)
    with torch.no_grad():
        assert torch_ops._direct(x, b)
    assert not torch_ops._direct(a.to("meta"), b), "another device type dispatches"
    gemm_opt.matmul(x, b).sum().backward()  # autograd: through the operator
    assert dispatched == ["data-parallel"]
    assert x.grad is not None and x.grad.shape == x.shape


def test_an_eager_call_recording_a_gradient_runs_the_implementation_itself(
    direct_on_cpu, monkeypatch
) -> None:
    """The eager autograd path's forward calls the operator's implementation, not the
    operator (whose dispatch it exists to skip); its gradients are autograd's."""
    launches, _ = direct_on_cpu
    P.clear_plans()  # a plan prepared by an earlier test launches into its own record
    through_op: list[str] = []
    real = torch_ops._FunctionalOp.__call__

    def counted(self, *args, **kwargs):
        through_op.append(self.qualname)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(torch_ops._FunctionalOp, "__call__", counted)
    g = _gen(12)
    x = torch.randn(64, 32, generator=g).half().requires_grad_()
    b = torch.randn(32, 48, generator=g).half()
    assert torch_ops._eager_autograd("matmul", (x, b))
    y = gemm_opt.matmul(x, b)
    assert through_op == [] and len(launches) == 1 and y.requires_grad
    y.float().sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape and through_op == []


def test_an_eager_call_reuses_the_launch_prepared_for_its_signature(direct_on_cpu) -> None:
    """The second eager call of a signature launches the first one's prepared launch on
    its own tensors; a change of shape, stride, dtype, address divisibility or keyword
    takes the full path (and its checks) again; a bad call still gets its message."""
    launches, _ = direct_on_cpu
    g = _gen(12)
    a = torch.randn(64, 40, generator=g).half()
    b = torch.randn(40, 48, generator=g).half()
    gemm_opt.matmul(a, b)  # the first CUDA call installs the builder (part of the signature)
    P.clear_plans()
    gemm_opt.matmul(a, b)
    assert not launches[-1].get("prepared")
    a2, b2 = a.clone(), b.clone()
    c = gemm_opt.matmul(a2, b2)
    assert launches[-1].get("prepared") and launches[-1]["a"] is a2 and launches[-1]["b"] is b2
    assert launches[-1]["c"] is c and c.shape == (64, 48) and c.dtype == torch.float16
    assert launches[-1]["M"] == 64 and launches[-1]["K"] == 40
    for other in (
        lambda: gemm_opt.matmul(a[:32], b),  # shape
        lambda: gemm_opt.matmul(torch.randn(64, 80).half()[:, :40], b),  # stride
        lambda: gemm_opt.matmul(a.bfloat16(), b.bfloat16()),  # dtype
        lambda: gemm_opt.matmul(a, b, schedule="persistent"),  # keyword
    ):
        before = len(launches)
        other()
        assert len(launches) == before + 1 and not launches[-1].get("prepared")
    assert launches[-1]["spec"].kind == "persistent"
    with pytest.raises(ValueError, match="b: expected shape"):
        gemm_opt.matmul(a, torch.randn(41, 48).half())
    misaligned = torch.randn(64 * 40 + 1).half()[1:].view(64, 40)  # a's shape and strides
    with pytest.raises(ValueError, match=r"a: data at \S+ is not 16-byte aligned"):
        gemm_opt.matmul(misaligned, b)
    assert P.cached_plans() == 5


def test_the_host_path_benchmark_refuses_to_run_without_a_gpu(capsys) -> None:
    host_path = load_script(ROOT / "benchmarks" / "h100" / "host_path.py", "h100_host_path")
    assert host_path.main(["--calls", "10"]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


def test_scaled_calls_reuse_their_plan_and_prepared_launch(direct_on_cpu, monkeypatch) -> None:
    """An eager FP8 call on the GPU plans once per signature and then only launches the
    prepared kernel on the call's tensors (no dispatch, no plan): a new shape, a
    scale of another layout, the deterministic flag or another bundle folder plans
    again; host lengths go to the device once per plan."""
    from gemm_opt.runtime import scaled

    launches, dispatched = direct_on_cpu
    planned: list[str] = []
    real_plan, real_grouped = scaled.scaled_plan, scaled.scaled_grouped_plan

    def counted(real):
        def plan(*args, **kwargs):
            planned.append(real.__name__)
            return real(*args, **kwargs)

        return plan

    monkeypatch.setattr(scaled, "scaled_plan", counted(real_plan))
    monkeypatch.setattr(scaled, "scaled_grouped_plan", counted(real_grouped))
    scaled.clear_plans()
    g = _gen(13)
    e4m3 = torch.float8_e4m3fn
    a = torch.randn(64, 128, generator=g).to(e4m3)
    w = torch.randn(96, 128, generator=g).to(e4m3)
    sa, sb = torch.rand(64, 1, generator=g) + 0.5, torch.rand(1, 96, generator=g) + 0.5

    def call(a=a, sa=sa, sb=sb):
        return gemm_opt.matmul(a, w.t(), scale_a=sa, scale_b=sb)

    for _ in range(3):
        call(a=a.clone())  # new addresses, same signature
    assert planned == ["scaled_plan"] and dispatched == []
    assert [bool(x.get("prepared")) for x in launches] == [False, True, True]
    call(a=a[:32].clone(), sa=sa[:32].clone())  # another M
    call(sa=torch.tensor(2.0), sb=torch.tensor(0.5))  # tensorwise: another recipe
    assert planned == ["scaled_plan"] * 3
    monkeypatch.setenv(rt.BUNDLE_DIR_ENV, "/elsewhere")
    call()
    assert len(planned) == 4, "another bundle folder: the kernels may differ"
    # grouped, host lengths: planned once, the lengths copied to the device once
    wg = torch.randn(3, 96, 128, generator=g).to(e4m3)
    lens = torch.tensor([40, 0, 24], dtype=torch.int32)
    sbg = torch.rand(3, 1, 96, generator=g) + 0.5
    planned.clear()
    for _ in range(2):
        gemm_opt.grouped_matmul(a, wg, lens, trans_b=True, scale_a=sa, scale_b=sbg)
    assert planned == ["scaled_grouped_plan"]
    assert launches[-1].get("prepared") and launches[-1]["group_lens"] is launches[-2]["group_lens"]
    planned.clear()
    torch.use_deterministic_algorithms(True)
    try:
        call()
    finally:
        torch.use_deterministic_algorithms(False)
    assert planned == ["scaled_plan"], "the deterministic flag is part of the signature"
    scaled.clear_plans()
