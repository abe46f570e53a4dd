"""A torch-free numerical check of the VJP of every op in the table (inner-product test, float64).

Every op recorded by the rest of the suite (Note [VJP samples] in conftest.py) is checked by
``vjp_check.check_sample`` at the end of the module that recorded it; this file reports one
result per table entry, and fails for an entry no test records. It runs last (its name); run
alone it has no samples and skips. Under pytest-xdist an entry recorded only in another worker is
skipped here (it was checked there), and conftest.py checks at the end of the session that every
entry was recorded by some worker.
"""

from __future__ import annotations

import os

import pytest
from conftest import VJP_RESULTS, VJP_SAMPLES, vjp_result
from vjp_check import SKIP

from leafgrad.ops.table import OPS


@pytest.mark.every_case  # every op of the table
@pytest.mark.parametrize("name", sorted(OPS))
def test_vjp_matches_finite_differences(name):
    if name in SKIP:
        pytest.skip(SKIP[name])
    if not OPS[name].differentiable:
        pytest.skip("not differentiable")
    if not VJP_SAMPLES and not VJP_RESULTS:
        pytest.skip("run with the whole suite: samples come from the other tests")
    if name not in VJP_SAMPLES:
        if os.environ.get("PYTEST_XDIST_WORKER"):
            pytest.skip("recorded in another worker, and checked there")
        pytest.fail(f"no test records op {name!r} with an operand that requires grad")
    status, message = vjp_result(name)
    if status == "skip":
        pytest.skip(message)
    assert status == "ok", message
