"""One-line notebook setup: ``from trnkb.views.nbsetup import setup; kb = setup()``.

Makes notebook outputs static, offline and byte-stable so nbval can compare them:

- altair renders to SVG through vl-convert (the default HTML renderer pulls vega from a
  CDN and writes a random div id on every run);
- pandas prints short, fixed-precision tables, and every DataFrame's HTML is drawn in the
  site's one table style (:func:`trnkb.views.display.table`: units in headers, em dash for
  missing values, display names, linked sources).
"""

from __future__ import annotations

from pathlib import Path

import altair as alt
import pandas as pd
from IPython.display import Markdown, display

from trnkb.kb import KnowledgeBase, load
from trnkb.views import display as _display
from trnkb.views.markdown import escape


def setup(path: str | Path | None = None) -> KnowledgeBase:
    """Configure altair and pandas for notebooks and return the loaded knowledge base.

    Parameters
    ----------
    path : path-like, optional
        Spec directory; default the specs shipped with trnkb.
    """
    _ = alt.renderers.enable("svg")
    pd.set_option("display.precision", 4)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.max_colwidth", 80)
    pd.set_option("display.width", 160)
    kb = load(path)
    _house_style(kb)
    return kb


def _house_style(kb: KnowledgeBase) -> None:
    """Render every DataFrame shown in the notebook with :func:`trnkb.views.display.table`."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebook stack
        return
    shell = get_ipython()
    if shell is not None:
        html = shell.display_formatter.formatters["text/html"]
        html.for_type(pd.DataFrame, lambda df: _display.table(df, kb=kb).html)


def answer(*sentences: str) -> None:
    """Show a notebook's short answer as Markdown, every sentence escaped as plain text.

    The sentences are built from KB values (f-strings), so they are escaped: a spec string
    can never inject markup into the rendered notebook or the site.
    """
    text = "**Answer.** " + " ".join(escape(s) for s in sentences)
    display(Markdown(text))  # type: ignore[no-untyped-call]
