"""Scale checks at their edges (found by ``benchmarks/mutation.py`` in
``gemm_opt.core.scaling``): the rows of a non-square A, the dtypes a float
recipe takes, and group lengths that sum right but go negative."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gemm_opt.core.scaling import Operand, Recipe, element_scales, scaled_reference


@pytest.mark.parametrize("shape", [(4, 8), (8, 4), (3, 256)])
def test_rowwise_scales_of_a_cover_its_rows(shape: tuple[int, int]) -> None:
    scales = np.arange(1, shape[0] + 1, dtype=np.float32).reshape(-1, 1)
    got = element_scales(Recipe.ROWWISE, Operand.A, scales, shape)
    np.testing.assert_array_equal(np.broadcast_to(got, shape), np.broadcast_to(scales, shape))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_float_recipe_takes_float_scales(dtype) -> None:
    element_scales(Recipe.TENSORWISE, Operand.A, np.ones((1, 1), dtype), (4, 8))


@pytest.mark.parametrize("dtype", [ml_dtypes.float8_e4m3fn, np.uint8, np.int32])
def test_a_float_recipe_refuses_other_scales(dtype) -> None:
    with pytest.raises(TypeError, match="scale_a: tensorwise takes float scales"):
        element_scales(Recipe.TENSORWISE, Operand.A, np.ones((1, 1), dtype), (4, 8))


def test_group_lengths_summing_right_but_negative_are_refused() -> None:
    a = np.zeros((8, 4), np.uint8)
    b = np.zeros((3, 4, 2), np.uint8)
    one = np.ones((1, 1), np.float32)
    with pytest.raises(ValueError, match=r"group_lens: expected 3 lengths >= 0 summing to 8"):
        scaled_reference(a, b, "e4m3fn", one, one, "tensorwise", group_lens=[5, -1, 4])
