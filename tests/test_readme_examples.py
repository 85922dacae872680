"""Every command and Python snippet in README.md and docs/*.md runs, so examples cannot rot.

From each fenced ```bash block, every line starting with ``trnkb `` is run through the
CLI's own app (in this process, comments stripped, continued lines joined); every
```python block is run as a script in a fresh interpreter. Both run in a fresh temporary
directory (so ``--out out`` writes there) and must exit 0.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import trnkb

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)


def _commands(body: str):
    """(line offset, command) with backslash-continued lines joined."""
    lines = body.splitlines()
    k = 0
    while k < len(lines):
        start, cmd = k, lines[k]
        while cmd.endswith("\\") and k + 1 < len(lines):
            k += 1
            cmd = cmd[:-1] + " " + lines[k].strip()
        yield start, cmd
        k += 1


def examples() -> list:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            lang, body = m.group(1), m.group(2)
            line = text[: m.start()].count("\n") + 2
            if lang == "bash":
                for k, cmd in _commands(body):
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
def test_example_runs(lang, code, tmp_path, monkeypatch):
    if lang == "bash":
        # in this process (the CLI's own entry point, no interpreter start-up per command)
        from typer.testing import CliRunner

        from trnkb.cli import app

        monkeypatch.chdir(tmp_path)
        args = shlex.split(code, comments=True)[1:]
        if "--record" in args:  # writes the verdict history: into a copy, never the checkout's
            import shutil

            import trnkb.audit.claims.history as history

            copy = tmp_path / "history.yaml"
            shutil.copy(history.history_path(trnkb.load()), copy)
            monkeypatch.setattr(history, "history_path", lambda kb: copy)
        r = CliRunner().invoke(app, args, env={"COLUMNS": "120"})
        assert r.exception is None or isinstance(r.exception, SystemExit), (
            f"{code}\n{type(r.exception).__name__}: {r.exception}")
        assert r.exit_code == 0, f"{code}\n--- output ---\n{r.output[-3000:]}"
        return
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{code}\n--- stderr ---\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr
