"""The few CUDA driver API calls a bundle launch needs, through ctypes on ``libcuda.so.1``.

Nothing here needs the CUDA toolkit, Triton or a C compiler: only the
driver library every machine with an NVIDIA GPU has. Modules are loaded into
each device's primary context, the one PyTorch uses, so kernels launch on
PyTorch's streams and read its tensors.
"""

from __future__ import annotations

import ctypes
import threading

# CUfunction_attribute
FUNC_MAX_THREADS_PER_BLOCK = 0
FUNC_SHARED_SIZE_BYTES = 1
FUNC_LOCAL_SIZE_BYTES = 3
FUNC_NUM_REGS = 4
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
# CUdevice_attribute
DEV_COMPUTE_CAPABILITY_MAJOR = 75
DEV_COMPUTE_CAPABILITY_MINOR = 76
DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
#: Dynamic shared memory a kernel may use without opting in.
DEFAULT_SHARED_LIMIT = 48 * 1024
CUDA_ERROR_INVALID_VALUE = 1

_LIBRARY = "libcuda.so.1"
_vp = ctypes.c_void_p
_SIGNATURES: dict[str, list[type]] = {
    "cuInit": [ctypes.c_uint],
    "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    "cuGetErrorString": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDeviceGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(_vp), ctypes.c_int],
    "cuCtxGetCurrent": [ctypes.POINTER(_vp)],
    "cuCtxSetCurrent": [_vp],
    "cuModuleLoadData": [ctypes.POINTER(_vp), ctypes.c_char_p],
    "cuModuleUnload": [_vp],
    "cuModuleGetFunction": [ctypes.POINTER(_vp), _vp, ctypes.c_char_p],
    "cuFuncGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, _vp],
    "cuFuncSetAttribute": [_vp, ctypes.c_int, ctypes.c_int],
    "cuOccupancyMaxActiveBlocksPerMultiprocessor": [
        ctypes.POINTER(ctypes.c_int),
        _vp,
        ctypes.c_int,
        ctypes.c_size_t,
    ],
    "cuLaunchKernel": [
        _vp,
        *[ctypes.c_uint] * 6,
        ctypes.c_uint,
        _vp,
        ctypes.POINTER(_vp),
        ctypes.POINTER(_vp),
    ],
    "cuDriverGetVersion": [ctypes.POINTER(ctypes.c_int)],
    "cuTensorMapEncodeTiled": [
        ctypes.c_char_p,  # CUtensorMap* (128 bytes, 64-byte aligned)
        ctypes.c_int,  # CUtensorMapDataType
        ctypes.c_uint,  # rank
        _vp,  # global address
        ctypes.POINTER(ctypes.c_uint64),  # global dims, innermost first
        ctypes.POINTER(ctypes.c_uint64),  # global strides in bytes (rank - 1)
        ctypes.POINTER(ctypes.c_uint32),  # box dims
        ctypes.POINTER(ctypes.c_uint32),  # element strides
        ctypes.c_int,  # interleave
        ctypes.c_int,  # swizzle
        ctypes.c_int,  # L2 promotion
        ctypes.c_int,  # out-of-bounds fill
    ],
}
#: ``cuTensorMapEncodeTiled`` settings of a tiled descriptor, as Triton's
#: launcher encodes a host ``TensorDescriptor``: no interleave, 128-byte L2
#: promotion, out-of-bounds elements read as zero.
TENSOR_MAP_INTERLEAVE_NONE = 0
TENSOR_MAP_L2_PROMOTION_L2_128B = 2
TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
#: Drivers up to this version mishandle a descriptor of less than 128 KiB
#: unless bit 21 of its second word is cleared (Triton's launcher, after CUTLASS).
_SMALL_TENSORMAP_FIX_UP_TO = 13010
#: Present from CUDA 12.4 drivers on; used to check a binary's parameter list.
_OPTIONAL = {
    "cuFuncGetParamInfo": [
        _vp,
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.POINTER(ctypes.c_size_t),
    ],
}


class DeviceError(RuntimeError):
    """No usable GPU: no driver, no device, or a device the kernel cannot run on."""


class CudaError(RuntimeError):
    """A CUDA driver call failed; ``status`` is its ``CUresult``."""

    def __init__(self, call: str, status: int, name: str, text: str) -> None:
        super().__init__(f"{call} failed: {name} ({status}): {text}")
        self.call = call
        self.status = status
        self.name = name


class Driver:
    """``libcuda.so.1`` with the calls of :data:`_SIGNATURES` typed."""

    def __init__(self, library: str = _LIBRARY) -> None:
        try:
            self.lib = ctypes.CDLL(library)
        except OSError as e:
            raise DeviceError(
                f"no NVIDIA driver on this machine: cannot load {library} ({e})"
            ) from None
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
        self.has_param_info = hasattr(self.lib, "cuFuncGetParamInfo")
        for name, argtypes in _OPTIONAL.items():
            if hasattr(self.lib, name):
                fn = getattr(self.lib, name)
                fn.argtypes = argtypes
                fn.restype = ctypes.c_int
        self._contexts: dict[int, ctypes.c_void_p] = {}
        self._version: int | None = None
        self.check(self.lib.cuInit(0), "cuInit")

    def error_text(self, status: int) -> tuple[str, str]:
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        self.lib.cuGetErrorName(status, ctypes.byref(name))
        self.lib.cuGetErrorString(status, ctypes.byref(text))
        return (
            (name.value or b"CUDA_ERROR_UNKNOWN").decode(),
            (text.value or b"unknown error").decode(),
        )

    def check(self, status: int, call: str) -> None:
        if status != 0:
            name, text = self.error_text(status)
            if call == "cuInit" or name == "CUDA_ERROR_NO_DEVICE":
                raise DeviceError(f"the CUDA driver found no usable GPU: {call}: {name}: {text}")
            raise CudaError(call, status, name, text)

    # -- devices and contexts --

    def device_count(self) -> int:
        n = ctypes.c_int()
        self.check(self.lib.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
        return n.value

    def device_attribute(self, attribute: int, ordinal: int) -> int:
        dev, value = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        self.check(
            self.lib.cuDeviceGetAttribute(ctypes.byref(value), attribute, dev),
            "cuDeviceGetAttribute",
        )
        return value.value

    def capability(self, ordinal: int) -> tuple[int, int]:
        return (
            self.device_attribute(DEV_COMPUTE_CAPABILITY_MAJOR, ordinal),
            self.device_attribute(DEV_COMPUTE_CAPABILITY_MINOR, ordinal),
        )

    def make_current(self, ordinal: int) -> None:
        """Make device ``ordinal``'s primary context (PyTorch's) current in this thread."""
        ctx = self._contexts.get(ordinal)
        if ctx is None:
            dev = ctypes.c_int()
            self.check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
            ctx = ctypes.c_void_p()
            self.check(
                self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                "cuDevicePrimaryCtxRetain",
            )
            self._contexts[ordinal] = ctx
        current = ctypes.c_void_p()
        self.check(self.lib.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
        if current.value != ctx.value:
            self.check(self.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    # -- modules and functions --

    def load_module(self, image: bytes) -> ctypes.c_void_p:
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
        return module

    def unload_module(self, module: ctypes.c_void_p) -> None:
        self.check(self.lib.cuModuleUnload(module), "cuModuleUnload")

    def function(self, module: ctypes.c_void_p, symbol: str) -> ctypes.c_void_p:
        fn = ctypes.c_void_p()
        self.check(
            self.lib.cuModuleGetFunction(ctypes.byref(fn), module, symbol.encode()),
            f"cuModuleGetFunction({symbol!r})",
        )
        return fn

    def function_attribute(self, fn: ctypes.c_void_p, attribute: int) -> int:
        value = ctypes.c_int()
        self.check(
            self.lib.cuFuncGetAttribute(ctypes.byref(value), attribute, fn), "cuFuncGetAttribute"
        )
        return value.value

    def set_function_attribute(self, fn: ctypes.c_void_p, attribute: int, value: int) -> None:
        self.check(self.lib.cuFuncSetAttribute(fn, attribute, value), "cuFuncSetAttribute")

    def resident_blocks(self, fn: ctypes.c_void_p, threads: int, shared_bytes: int) -> int:
        """CTAs of ``fn`` one SM holds at once (registers, shared memory, threads)."""
        value = ctypes.c_int()
        self.check(
            self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                ctypes.byref(value), fn, threads, shared_bytes
            ),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        )
        return value.value

    def parameter_sizes(self, fn: ctypes.c_void_p) -> list[int] | None:
        """The byte size of each kernel parameter, from the binary; None on old drivers."""
        if not self.has_param_info:
            return None
        sizes = []
        offset, size = ctypes.c_size_t(), ctypes.c_size_t()
        while True:
            status = self.lib.cuFuncGetParamInfo(
                fn, len(sizes), ctypes.byref(offset), ctypes.byref(size)
            )
            if status == CUDA_ERROR_INVALID_VALUE:  # past the last parameter
                return sizes
            self.check(status, "cuFuncGetParamInfo")
            sizes.append(size.value)

    def encode_tensormap(
        self,
        address: int,
        dtype: int,
        elem_bytes: int,
        shape: list[int],
        strides: list[int],
        block: list[int],
        swizzle: int,
    ) -> bytes:
        """A tiled ``CUtensorMap`` (128 bytes) of the tensor at ``address``:
        ``shape`` and element ``strides`` outermost first, the last stride 1."""
        rank = len(shape)
        dims = (ctypes.c_uint64 * rank)(*reversed(shape))
        byte_strides = [s * elem_bytes for s in reversed(strides[:-1])]
        stride_arr = (ctypes.c_uint64 * max(rank - 1, 1))(*byte_strides)
        box = (ctypes.c_uint32 * rank)(*reversed(block))
        ones = (ctypes.c_uint32 * rank)(*[1] * rank)
        # Equivalent mutant: 128->129, 64->65 (a larger buffer still holds the aligned map).
        buf = ctypes.create_string_buffer(128 + 64)
        at = -ctypes.addressof(buf) % 64  # the driver wants the map 64-byte aligned
        out = (ctypes.c_char * 128).from_buffer(buf, at)
        status = self.lib.cuTensorMapEncodeTiled(
            ctypes.cast(out, ctypes.c_char_p),
            dtype,
            rank,
            address,
            dims,
            stride_arr,
            box,
            ones,
            TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            TENSOR_MAP_L2_PROMOTION_L2_128B,
            TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        if status:
            name, text = self.error_text(status)
            raise CudaError(
                "cuTensorMapEncodeTiled",
                status,
                name,
                f"{text} (address {address:#x}, shape {shape}, strides {strides}, "
                f"block {block}, {elem_bytes}-byte elements)",
            )
        data = bytearray(out.raw)
        if self.version() <= _SMALL_TENSORMAP_FIX_UP_TO:
            # Equivalent mutant: strict=False (the launcher passes one tensor's
            # shape and strides, of its rank each).
            last = sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) * elem_bytes
            if last + 1 < 128 * 1024:
                word = int.from_bytes(data[8:16], "little") & ~(1 << 21)
                data[8:16] = word.to_bytes(8, "little")
        return bytes(data)

    def version(self) -> int:
        """The driver's CUDA version (``cuDriverGetVersion``: 12040 is 12.4)."""
        if self._version is None:
            v = ctypes.c_int()
            self.check(self.lib.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
            self._version = v.value
        return self._version

    def launch_packed(
        self,
        fn: ctypes.c_void_p,
        gx: int,
        gy: int,
        gz: int,
        threads: int,
        shared_bytes: int,
        stream: int,
        pointers: ctypes.Array,
    ) -> None:
        """``cuLaunchKernel``; ``pointers`` holds the address of each parameter's value."""
        status = self.lib.cuLaunchKernel(
            fn, gx, gy, gz, threads, 1, 1, shared_bytes, stream, pointers, None
        )
        if status:
            self.check(status, "cuLaunchKernel")


_driver: Driver | None = None
_lock = threading.Lock()


def driver() -> Driver:
    """The process's driver handle (loaded and initialized on first use)."""
    global _driver
    with _lock:
        if _driver is None:
            _driver = Driver()
        return _driver
