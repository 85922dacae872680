"""The layer list in docs/architecture.md is the import contract in pyproject.toml, and
every module of trnkb belongs to a layer (issue 23)."""

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent
OUTSIDE_LAYERS = {"__init__.py", "__main__.py", "py.typed", "data", "peaks.py", "userdirs.py",
                  "__pycache__"}


def _contract_layers() -> list[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in cfg["contracts"] if c["type"] == "layers"]
    return contract["layers"]


def _documented_layers() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("<!-- layers:", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    # "trnkb.a : trnkb.b    description": the layer is everything before the description
    return [re.match(r"(trnkb\.\w+(?:\s+[|:]\s+trnkb\.\w+)*)", line).group(1)
            for line in block.splitlines() if line.strip()]


def test_architecture_page_lists_the_contract_layers_in_order():
    assert _documented_layers() == _contract_layers()


def test_every_package_of_trnkb_is_in_a_layer():
    layered = {name for layer in _contract_layers() for name in re.split(r"\s+[|:]\s+", layer)}
    present = {f"trnkb.{p.name}" for p in (ROOT / "trnkb").iterdir()
               if p.name not in OUTSIDE_LAYERS}
    assert present == layered


def test_every_layer_package_says_what_it_may_import():
    for layer in _contract_layers():
        for name in re.split(r"\s+[|:]\s+", layer):
            init = ROOT / Path(*name.split(".")) / "__init__.py"
            doc = ast.get_docstring(ast.parse(init.read_text())) or ""
            assert "May import:" in doc, f"{init}: its docstring does not say what it may import"
