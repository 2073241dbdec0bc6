"""The kernel's own tests reach into the kernel: their ``make_kernel`` is the internal ``Kernel``.

Plugin tests get the public :class:`~clawbot.testing.TestKernel` from the test kit's fixture;
here the same fixture builds the kernel itself (:func:`clawbot.testing.kernels.boot_kernel`),
since these tests check the parts a plugin never sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from clawbot.testing.kernels import boot_kernel


@pytest.fixture
def make_kernel(clawbot_home: Path) -> Any:
    async def factory(**kwargs: Any) -> Any:
        return await boot_kernel(kwargs.pop("home", clawbot_home), **kwargs)

    return factory
