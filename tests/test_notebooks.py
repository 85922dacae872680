"""The notebooks: the issue's nine exist, each opens with its question and answer (and on
the site nothing but those comes first), and re-executing one gives the same bytes."""

import json
import re
import shutil
from pathlib import Path

import pytest

from trnkb.site import answer_first
from trnkb.views import notebooks

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def test_every_issue_notebook_exists():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    # 01-09 from the first release, 10 (workloads, issue 12), 11 (other tools, issue 14)
    assert [n[:3] for n in names] == [f"{i:02d}-" for i in range(1, 12)], names


@pytest.mark.parametrize("name", ["06-datacenter.ipynb"])
def test_reexecution_is_byte_identical(tmp_path, name):
    # The smallest notebook; nbval checks every notebook's outputs, this checks the file
    # itself (no timing metadata, ids or paths that change between runs).
    copy = tmp_path / name
    shutil.copy(NOTEBOOKS / name, copy)
    changed = notebooks.execute(copy)
    assert not changed, f"re-executing {name} changed it; run `make notebooks` and commit"
    assert copy.read_bytes() == (NOTEBOOKS / name).read_bytes()


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_opens_with_its_question_then_its_answer(path):
    nb = json.loads(path.read_text())
    first = "".join(nb["cells"][0]["source"])
    assert first.startswith("# ") and "**Question.**" in first
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    answer = next(c for c in code[:3] if any("answer(" in line for line in c["source"]))
    shown = "".join(answer["outputs"][0]["data"]["text/markdown"])
    assert shown.startswith("**Answer.** ") and shown.count(". ") >= 2
    # on the site, every code cell up to the answer shows no code
    staged = json.loads(answer_first(path.read_text()))
    upto = next(i for i, c in enumerate(staged["cells"]) if "answer(" in "".join(c["source"]))
    for c in staged["cells"][: upto + 1]:
        if c["cell_type"] == "code":
            assert {"remove-input", "remove-cell"} & set(c["metadata"].get("tags", [])), c["source"]


def _sentences(markdown: str) -> int:
    text = markdown.removeprefix("**Answer.** ").replace("\\", "")
    return len([s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip()) if s])


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("0[1-6]-*.ipynb")), ids=lambda p: p.name)
def test_answers_are_three_sentences_at_most(path):
    nb = json.loads(path.read_text())
    out = next(o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
               if "**Answer.**" in "".join(o.get("data", {}).get("text/markdown", "")))
    assert _sentences("".join(out["data"]["text/markdown"])) <= 3


def test_execute_takes_notebook_files_or_folders_and_refuses_neither(tmp_path):
    from trnkb.views.notebooks import _notebooks

    nb = NOTEBOOKS / "01-trainium3-at-a-glance.ipynb"
    assert _notebooks(nb) == [nb]
    assert nb in _notebooks(NOTEBOOKS)
    for bad in (tmp_path, tmp_path / "missing.ipynb", tmp_path / "x.txt"):
        with pytest.raises(ValueError, match="no notebooks in"):
            _notebooks(bad)
