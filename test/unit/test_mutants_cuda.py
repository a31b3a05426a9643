"""The CUDA driver wrapper against a stand-in ``libcuda`` (found by
``benchmarks/mutation.py`` in ``gemm_opt.runtime.cuda``: without a GPU no test
called it).

:class:`FakeLibcuda` answers the calls of :data:`gemm_opt.runtime.cuda._SIGNATURES`
as the driver does (results through ``byref`` pointers, a ``CUresult``
back) and records what it is given, so the wrapper's errors, caching, the
``cuTensorMapEncodeTiled`` arguments and the small-descriptor fix-up are
pinned without a device.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from typing import Any

import pytest

from gemm_opt.runtime import cuda

#: What the stand-in writes as the encoded map: 128 distinct bytes, bit 21 of
#: the second 8-byte word set (byte 10 is 0xF5).
PATTERN = bytes(0xFF - i for i in range(128))
NAMES = {1: b"CUDA_ERROR_INVALID_VALUE", 100: b"CUDA_ERROR_NO_DEVICE", 700: b"CUDA_ERROR_LAUNCH"}


def _set(pointer: Any, value: Any) -> None:
    """Write through a ``ctypes.byref`` argument."""
    pointer._obj.value = value


def _typable(method: Any) -> Any:
    """``method`` as a plain function, which takes ``argtypes`` and ``restype``."""

    def call(*args: Any) -> Any:
        return method(*args)

    return call


class FakeLibcuda:
    """A ``libcuda.so.1`` of one device: each call is counted in ``calls``."""

    def __init__(self, *, version: int = 12040, param_sizes: list[int] | None = None) -> None:
        self.calls: Counter[str] = Counter()
        self.version = version
        self.status: dict[str, int] = {}
        self.current: int | None = None
        self.encoded: dict[str, Any] = {}
        self.launched: tuple = ()
        if param_sizes is not None:
            sizes = param_sizes

            def cuFuncGetParamInfo(fn: Any, index: int, offset: Any, size: Any) -> int:
                self.calls["cuFuncGetParamInfo"] += 1
                if index >= len(sizes):
                    return cuda.CUDA_ERROR_INVALID_VALUE
                _set(offset, 8 * index)
                _set(size, sizes[index])
                return self.status.get("cuFuncGetParamInfo", 0)

            self.cuFuncGetParamInfo = cuFuncGetParamInfo
        for name in cuda._SIGNATURES:  # typed by Driver: a function, not a bound method
            setattr(self, name, _typable(getattr(self, name)))

    def _call(self, name: str) -> int:
        self.calls[name] += 1
        return self.status.get(name, 0)

    def cuInit(self, flags: int) -> int:
        assert flags == 0, "cuInit takes no flags"
        return self._call("cuInit")

    def cuGetErrorName(self, status: int, name: Any) -> int:
        _set(name, NAMES.get(status))
        return 0

    def cuGetErrorString(self, status: int, text: Any) -> int:
        _set(text, b"the text of %d" % status if status in NAMES else None)
        return 0

    def cuDeviceGet(self, dev: Any, ordinal: int) -> int:
        _set(dev, 10 + ordinal)
        return self._call("cuDeviceGet")

    def cuDeviceGetAttribute(self, value: Any, attribute: int, dev: Any) -> int:
        _set(value, 1000 * dev.value + attribute)
        return self._call("cuDeviceGetAttribute")

    def cuDevicePrimaryCtxRetain(self, ctx: Any, dev: Any) -> int:
        _set(ctx, 0x5000 + dev.value)
        return self._call("cuDevicePrimaryCtxRetain")

    def cuCtxGetCurrent(self, ctx: Any) -> int:
        _set(ctx, self.current)
        return self._call("cuCtxGetCurrent")

    def cuCtxSetCurrent(self, ctx: Any) -> int:
        self.current = ctx.value
        return self._call("cuCtxSetCurrent")

    def cuDeviceGetCount(self, count: Any) -> int:
        _set(count, 2)
        return self._call("cuDeviceGetCount")

    def cuModuleLoadData(self, module: Any, image: bytes) -> int:
        _set(module, 0x7000 + len(image))
        return self._call("cuModuleLoadData")

    def cuModuleUnload(self, module: Any) -> int:
        return self._call("cuModuleUnload")

    def cuModuleGetFunction(self, fn: Any, module: Any, symbol: bytes) -> int:
        _set(fn, module.value + len(symbol))
        return self._call("cuModuleGetFunction")

    def cuFuncGetAttribute(self, value: Any, attribute: int, fn: Any) -> int:
        _set(value, 100 + attribute)
        return self._call("cuFuncGetAttribute")

    def cuFuncSetAttribute(self, fn: Any, attribute: int, value: int) -> int:
        return self._call("cuFuncSetAttribute")

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, n: Any, *args: Any) -> int:
        _set(n, 2)
        return self._call("cuOccupancyMaxActiveBlocksPerMultiprocessor")

    def cuDriverGetVersion(self, version: Any) -> int:
        _set(version, self.version)
        return self._call("cuDriverGetVersion")

    def cuTensorMapEncodeTiled(
        self, out: Any, dtype: int, rank: int, address: int, *rest: Any
    ) -> int:
        dims, strides, box, ones, interleave, swizzle, l2, oob = rest
        at = ctypes.cast(out, ctypes.c_void_p).value
        self.encoded = dict(
            aligned=at % 64 == 0, dtype=dtype, rank=rank, address=address,
            dims=list(dims), strides=list(strides), box=list(box), ones=list(ones),
            settings=(interleave, swizzle, l2, oob),
        )  # fmt: skip
        ctypes.memmove(at, PATTERN, 128)
        return self._call("cuTensorMapEncodeTiled")

    def cuLaunchKernel(self, fn: Any, *args: Any) -> int:
        self.launched = (fn, *args)
        return self._call("cuLaunchKernel")


@pytest.fixture
def lib(monkeypatch: pytest.MonkeyPatch) -> FakeLibcuda:
    fake = FakeLibcuda(param_sizes=[8, 4, 4])
    monkeypatch.setattr(cuda.ctypes, "CDLL", lambda name: fake)
    return fake


def test_init_types_the_optional_calls_the_library_has(lib: FakeLibcuda) -> None:
    d = cuda.Driver()
    assert d.has_param_info and lib.calls["cuInit"] == 1
    assert lib.cuFuncGetParamInfo.argtypes == cuda._OPTIONAL["cuFuncGetParamInfo"]
    assert lib.cuInit.restype is ctypes.c_int


def test_an_old_driver_without_param_info(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLibcuda(param_sizes=None)
    monkeypatch.setattr(cuda.ctypes, "CDLL", lambda name: fake)
    d = cuda.Driver()
    assert not d.has_param_info
    assert d.parameter_sizes(ctypes.c_void_p(1)) is None
    assert fake.calls["cuFuncGetParamInfo"] == 0


def test_parameter_sizes_stop_at_the_first_invalid_index(lib: FakeLibcuda) -> None:
    assert cuda.Driver().parameter_sizes(ctypes.c_void_p(1)) == [8, 4, 4]
    lib.status["cuFuncGetParamInfo"] = 700
    with pytest.raises(cuda.CudaError, match="cuFuncGetParamInfo failed: CUDA_ERROR_LAUNCH"):
        cuda.Driver().parameter_sizes(ctypes.c_void_p(1))


def test_check_passes_success_and_names_each_failure(lib: FakeLibcuda) -> None:
    d = cuda.Driver()
    d.check(0, "cuAnything")
    with pytest.raises(cuda.CudaError) as e:
        d.check(1, "cuModuleLoadData")
    assert (e.value.call, e.value.status, e.value.name) == (
        "cuModuleLoadData",
        1,
        "CUDA_ERROR_INVALID_VALUE",
    )
    assert str(e.value) == ("cuModuleLoadData failed: CUDA_ERROR_INVALID_VALUE (1): the text of 1")
    with pytest.raises(cuda.DeviceError, match="no usable GPU: cuCtxGetCurrent: CUDA_ERROR_NO"):
        d.check(100, "cuCtxGetCurrent")
    with pytest.raises(cuda.DeviceError, match="no usable GPU: cuInit: CUDA_ERROR_LAUNCH"):
        d.check(700, "cuInit")
    with pytest.raises(cuda.CudaError, match=r"CUDA_ERROR_UNKNOWN \(999\): unknown error$"):
        d.check(999, "cuLaunchKernel")


def test_a_failing_init_is_no_usable_gpu(lib: FakeLibcuda) -> None:
    lib.status["cuInit"] = 100
    with pytest.raises(cuda.DeviceError, match="no usable GPU"):
        cuda.Driver()


def test_contexts_are_retained_once_and_set_only_when_not_current(lib: FakeLibcuda) -> None:
    d = cuda.Driver()
    d.make_current(0)
    d.make_current(0)
    assert lib.current == 0x5000 + 10
    assert (lib.calls["cuDevicePrimaryCtxRetain"], lib.calls["cuCtxSetCurrent"]) == (1, 1)
    d.make_current(1)
    assert lib.current == 0x5000 + 11
    assert (lib.calls["cuDevicePrimaryCtxRetain"], lib.calls["cuCtxSetCurrent"]) == (2, 2)
    assert d.capability(1) == (11000 + 75, 11000 + 76)


def test_the_version_is_asked_once(lib: FakeLibcuda) -> None:
    d = cuda.Driver()
    assert d.version() == 12040 and d.version() == 12040
    assert lib.calls["cuDriverGetVersion"] == 1


def test_a_launch_is_one_dimensional_blocks(lib: FakeLibcuda) -> None:
    d = cuda.Driver()
    params = (ctypes.c_void_p * 1)()
    d.launch_packed(ctypes.c_void_p(7), 3, 2, 1, 128, 4096, 0, params)
    assert lib.launched[1:9] == (3, 2, 1, 128, 1, 1, 4096, 0)
    lib.status["cuLaunchKernel"] = 700
    with pytest.raises(cuda.CudaError, match="cuLaunchKernel failed"):
        d.launch_packed(ctypes.c_void_p(7), 1, 1, 1, 32, 0, 0, params)


def test_a_tensor_map_is_encoded_innermost_first(lib: FakeLibcuda) -> None:
    d = cuda.Driver()
    data = d.encode_tensormap(0x10000, 6, 2, [4, 300, 512], [300 * 512, 512, 1], [1, 64, 32], 3)
    assert lib.encoded == dict(
        aligned=True, dtype=6, rank=3, address=0x10000, dims=[512, 300, 4],
        strides=[512 * 2, 300 * 512 * 2], box=[32, 64, 1], ones=[1, 1, 1],
        settings=(0, 3, 2, 0),
    )  # fmt: skip
    assert data == PATTERN  # a new driver: no fix-up
    d.encode_tensormap(0x10000, 6, 2, [300, 512], [512, 1], [64, 32], 3)
    assert (lib.encoded["strides"], lib.encoded["dims"]) == ([1024], [512, 300])


def test_a_failed_encode_names_the_tensor(lib: FakeLibcuda) -> None:
    lib.status["cuTensorMapEncodeTiled"] = 1
    with pytest.raises(cuda.CudaError, match=r"address 0x100, shape \[8, 8\], strides \[8, 1\]"):
        cuda.Driver().encode_tensormap(0x100, 6, 2, [8, 8], [8, 1], [8, 8], 0)


def _fixed(data: bytes) -> bool:
    """Whether bit 21 of the second word was cleared (and nothing else changed)."""
    if data == PATTERN:
        return False
    assert data == PATTERN[:10] + bytes([PATTERN[10] & ~0x20]) + PATTERN[11:]
    return True


@pytest.mark.parametrize(
    ("elem_bytes", "shape", "strides", "fixed"),
    [
        (1, [1, 131071], [131071, 1], True),  # its last byte at 131070
        (1, [1, 131072], [131072, 1], False),  # its last byte at 131071: 128 KiB
        (2, [1, 65536], [65536, 1], True),
        (2, [1, 65537], [65537, 1], False),
        (2, [2, 8], [65536, 1], False),  # rows far apart: the extent, not the elements
        (2, [2, 8], [8, 1], True),
    ],
)
def test_an_old_driver_clears_bit_21_below_128_kib(
    lib: FakeLibcuda, elem_bytes: int, shape: list[int], strides: list[int], fixed: bool
) -> None:
    lib.version = cuda._SMALL_TENSORMAP_FIX_UP_TO
    d = cuda.Driver()
    assert _fixed(d.encode_tensormap(0x100, 6, elem_bytes, shape, strides, [1, 8], 0)) is fixed
    lib.version = cuda._SMALL_TENSORMAP_FIX_UP_TO + 1
    assert not _fixed(
        cuda.Driver().encode_tensormap(0x100, 6, elem_bytes, shape, strides, [1, 8], 0)
    )


def test_the_process_has_one_driver(lib: FakeLibcuda, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda, "_driver", None)
    first = cuda.driver()
    assert cuda.driver() is first and lib.calls["cuInit"] == 1
