"""Arrays in ordinary pages behave as np.zeros does."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from routing_core.scorers._memory import zeros_in_small_pages


@pytest.mark.parametrize(
    ("shape", "dtype"), [((3, 4), np.int32), ((0, 16), np.int32), ((5,), np.float64)]
)
def test_small_page_arrays_are_zeroed_writable_and_shaped(shape, dtype) -> None:  # noqa: ANN001
    array = zeros_in_small_pages(shape, dtype)
    np.testing.assert_array_equal(array, np.zeros(shape, dtype))
    assert array.dtype == dtype and array.shape == shape and array.flags.writeable
    array[...] = 7
    assert (array == 7).all()
    owner = array
    while isinstance(owner, np.ndarray):  # its memory is an anonymous mapping, not numpy's
        owner = owner.base
    assert isinstance(owner, memoryview) and isinstance(owner.obj, mmap.mmap)


def test_a_small_page_array_outlives_the_function_that_mapped_it() -> None:
    arrays = [zeros_in_small_pages((1000,), np.int32) for _ in range(3)]
    for i, array in enumerate(arrays):
        array[:] = i
    assert [int(a.sum()) for a in arrays] == [0, 1000, 2000]
