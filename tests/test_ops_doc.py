"""docs/ops.md is generated from the op table and must be current."""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ops_doc_is_current():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_ops_doc
    finally:
        sys.path.pop(0)
    written = (ROOT / "docs" / "ops.md").read_text()
    assert written == gen_ops_doc.render(), "run: python tools/gen_ops_doc.py"
