"""Progress shows in a log too: one line per notebook when stdout is not a terminal."""

from __future__ import annotations

from pathlib import Path

import trnkb.views.notebooks as nbs


def test_notebook_execution_prints_one_line_per_notebook_to_a_pipe(tmp_path, monkeypatch,
                                                                   capsys):
    for name in ("01-a.ipynb", "02-b.ipynb"):
        (tmp_path / name).write_text("{}")
    ran: list[str] = []
    monkeypatch.setattr(nbs, "execute", lambda p, timeout=600: ran.append(Path(p).name) or True)
    changed = nbs.execute_all(tmp_path)
    out = capsys.readouterr().out.splitlines()  # pytest's capture is not a terminal
    assert ran == ["01-a.ipynb", "02-b.ipynb"] and len(changed) == 2
    assert out[0] == "notebooks: [1/2] 01-a.ipynb"
    assert out[2] == "notebooks: [2/2] 02-b.ipynb"
    assert out[1].startswith("notebooks: [1/2] 01-a.ipynb done in ")
