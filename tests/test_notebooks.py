"""Every notebook under notebooks/ runs top to bottom without an error."""

from __future__ import annotations

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3").execute(cwd=str(path.parent.parent))
    text = "".join(
        out.get("text", "") + out.get("data", {}).get("text/plain", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )
    if path.name == "01_leaf_tensors.ipynb":
        assert "tensor(1182591.3750, grad_fn=<MulBackward0>)" in text
        assert "[20200910., 20200910., 20200910., 20200910., 20200910.]" in text
