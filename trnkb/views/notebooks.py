"""Execute the comparison notebooks in place, deterministically.

``python -m trnkb.views.notebooks execute notebooks`` runs every ``*.ipynb`` under the folder (or
the notebook files named) with the ``python3`` kernel of the current environment and stores
the outputs. Running it twice gives byte-identical files: no timing metadata
(``record_timing=False``), and the notebooks themselves print no paths, times or random
ids (charts are SVG, see :mod:`trnkb.views.nbsetup`). nbval then checks the stored outputs in CI.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import nbformat
import typer
from nbclient import NotebookClient
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="Execute trnkb notebooks in place.",
)


def _kernel_env() -> dict[str, str]:
    # The kernel must import the same trnkb as this process (a checkout or worktree
    # that is not installed), so put its parent first on the kernel's PYTHONPATH.
    root = str(Path(__file__).resolve().parent.parent)
    paths = [root] + [
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != root
    ]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }


def execute(path: str | Path, timeout: int = 600, kernel_name: str = "python3") -> bool:
    """Execute one notebook in place (working directory: its folder).

    Returns True when the stored file changed. Raises ``nbclient.exceptions.CellExecutionError``
    when a cell fails; the file is then left as it was.
    """
    path = Path(path)
    before = path.read_bytes()
    nb = nbformat.reads(before.decode("utf-8"), as_version=4)  # type: ignore[no-untyped-call]
    # The kernel's own start-up notices (e.g. about its local TCP transport) are not
    # findings; only errors reach the console.
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    old = os.environ.copy()
    os.environ.update(_kernel_env())  # the kernel subprocess inherits this environment
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    after = (nbformat.writes(nb) + "\n").encode("utf-8")  # type: ignore[no-untyped-call]
    if after != before:
        path.write_bytes(after)
    return bool(after != before)


def _notebooks(path: str | Path) -> list[Path]:
    """The notebooks ``path`` names: itself if it is one, else the ``*.ipynb`` in the folder."""
    p = Path(path)
    if p.suffix == ".ipynb" and p.is_file():
        return [p]
    paths = sorted(p.glob("*.ipynb")) if p.is_dir() else []
    if not paths:
        raise ValueError(f"no notebooks in {path}")
    return paths


def execute_all(folder: str | Path | list[str | Path], timeout: int = 600) -> list[Path]:
    """Execute every notebook in ``folder`` (sorted by name), or the notebook files or folders
    listed; return those that changed."""
    given = folder if isinstance(folder, list) else [folder]
    paths = [nb for f in given for nb in _notebooks(f)]
    changed = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    if not sys.stdout.isatty():  # a log or a pipe: one line per notebook, as it starts
        import time

        for k, p in enumerate(paths, 1):
            start = time.monotonic()
            print(f"notebooks: [{k}/{len(paths)}] {p.name}", flush=True)
            if execute(p, timeout=timeout):
                changed.append(p)
            print(f"notebooks: [{k}/{len(paths)}] {p.name} done in "
                  f"{time.monotonic() - start:.0f} s", flush=True)
        return changed
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("notebooks", total=len(paths))
        for p in paths:
            bar.update(task, description=p.name)
            if execute(p, timeout=timeout):
                changed.append(p)
            bar.advance(task)
        bar.update(task, description="notebooks")
    return changed


@app.command("execute")
def _execute_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Notebook files or folders of .ipynb files (default: notebooks).")] = None,
    timeout: Annotated[int, typer.Option(help="Seconds allowed per cell.")] = 600,
) -> None:
    """Execute the notebooks named (every notebook of a folder) in place and store outputs."""
    try:
        changed = execute_all(list(paths or [Path("notebooks")]), timeout=timeout)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        raise typer.Exit(1) from None
    print(
        f"{len(changed)} notebook(s) changed"
        + (": " + ", ".join(p.name for p in changed) if changed else "")
    )


@app.callback()
def _main() -> None:
    """Execute trnkb notebooks in place."""


if __name__ == "__main__":
    app()
