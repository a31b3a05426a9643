"""Shared layouts at their edges (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.layouts``): the size formula of padded allocations against a
reference on every small size, and every rule of ``check_shared_layout`` and
``permuted_layout`` at the values just inside and just outside it.
"""

from __future__ import annotations

import math

import pytest

from gemm_opt.core.layouts import (
    LayoutError,
    PaddedShared,
    PartitionedShared,
    SwizzledShared,
    allocation_bytes,
    check_shared_layout,
    permuted_layout,
)


def _padded_elements(n: int, interval: int, amount: int) -> int:
    """Pads after each whole interval except the last element's."""
    return n + sum(amount for i in range(1, n) if i % interval == 0)


@pytest.mark.parametrize("bits", [4, 8, 16, 32])
@pytest.mark.parametrize("interval", [2, 4, 8, 16])
@pytest.mark.parametrize("amount", [1, 2, 4])
def test_padded_allocation_bytes(bits: int, interval: int, amount: int) -> None:
    for n in range(0, 70):
        want = math.ceil(_padded_elements(n, interval, amount) * bits / 8)
        padded = PaddedShared(interval, amount, (0,))
        assert allocation_bytes(padded, (n,), bits) == want, n
        cut = PartitionedShared(2, 1, 0, padded)
        assert allocation_bytes(cut, (n,), bits) == want, n
        assert allocation_bytes(SwizzledShared(order=(0,)), (n,), bits) == math.ceil(n * bits / 8)


@pytest.mark.parametrize("name", ["vec", "per_phase", "max_phase"])
def test_swizzle_fields_are_powers_of_two(name: str) -> None:
    for v in (1, 2, 8):
        check_shared_layout(SwizzledShared(**{name: v}), (16, 16))
    for v in (0, 3, -2):
        with pytest.raises(LayoutError, match=f"{name} = {v} must be a power of two"):
            check_shared_layout(SwizzledShared(**{name: v}), (16, 16))


@pytest.mark.parametrize(("interval", "amount"), [(3, 2), (4, 3), (6, 6)])
def test_padding_interval_and_amount_are_powers_of_two(interval: int, amount: int) -> None:
    with pytest.raises(LayoutError, match="interval and amount must be powers of two"):
        check_shared_layout(PaddedShared(interval, amount), (16, 16))


def test_the_orders_a_multi_buffered_allocation_takes() -> None:
    two, three = SwizzledShared(order=(1, 0)), SwizzledShared(order=(2, 1, 0))
    check_shared_layout(two, (2, 8, 16), multi_buffered=True)
    check_shared_layout(three, (2, 8, 16), multi_buffered=True)
    check_shared_layout(SwizzledShared(order=(0,)), (4, 16), multi_buffered=True)
    with pytest.raises(LayoutError, match=r"needs 2$"):
        check_shared_layout(SwizzledShared(order=(0,)), (4, 16))
    with pytest.raises(LayoutError, match=r"needs 1$"):
        check_shared_layout(SwizzledShared(order=()), (16,), multi_buffered=True)


@pytest.mark.parametrize(("parts", "groups"), [(3, 1), (1, 3), (6, 2)])
def test_partition_counts_are_powers_of_two(parts: int, groups: int) -> None:
    with pytest.raises(LayoutError, match="num_partitions and num_groups must be powers of two"):
        check_shared_layout(PartitionedShared(parts, groups, 0), (48, 48))


def test_the_partition_dim_is_one_of_the_laid_out_dims() -> None:
    check_shared_layout(PartitionedShared(2, 1, 1), (16, 16))
    with pytest.raises(LayoutError, match="partition_dim 2 is out of range for a rank-2 block"):
        check_shared_layout(PartitionedShared(2, 1, 2), (16, 16))


def test_permuted_views() -> None:
    padded = PaddedShared(8, 2, (1, 0))
    assert permuted_layout(padded, (1, 0)) == PaddedShared(8, 2, (0, 1))
    assert permuted_layout(SwizzledShared(2, 1, 4, (1, 0)), (1, 0)) == SwizzledShared(
        2, 1, 4, (0, 1)
    )
    with pytest.raises(LayoutError, match="has no transposed view"):
        permuted_layout(PartitionedShared(2, 1, 0), (1, 0))
    with pytest.raises(LayoutError, match=r"has 3 entries but the layout orders 2 dims"):
        permuted_layout(padded, (2, 0, 1))
