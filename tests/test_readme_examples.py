"""Every command and Python snippet in README.md and docs/*.md runs, so examples cannot rot.

From each fenced ```bash block, every line starting with ``trnkb `` is run (as
``python -m trnkb ...``, comments stripped); every ```python block is run as a script.
Both run in a fresh temporary directory (so ``--out out`` writes there) and must exit 0.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)


def examples() -> list:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            lang, body = m.group(1), m.group(2)
            line = text[: m.start()].count("\n") + 2
            if lang == "bash":
                for k, cmd in enumerate(body.splitlines()):
                    if cmd.startswith("trnkb "):
                        out.append(pytest.param("bash", cmd, id=f"{path.name}:{line + k}"))
            elif lang == "python":
                out.append(pytest.param("python", body, id=f"{path.name}:{line}"))
    return out


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "COLUMNS": "120"}


def test_the_docs_have_examples():
    kinds = [p.values[0] for p in examples()]
    assert kinds.count("bash") >= 10 and kinds.count("python") >= 1


@pytest.mark.parametrize("lang, code", examples())
def test_example_runs(lang, code, tmp_path):
    if lang == "bash":
        args = shlex.split(code, comments=True)
        cmd = [sys.executable, "-m", "trnkb", *args[1:]]
    else:
        cmd = [sys.executable, "-c", code]
    r = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{code}\n--- stderr ---\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr
