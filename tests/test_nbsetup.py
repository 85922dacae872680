"""Notebook setup: static SVG charts, and answers that cannot inject markup."""

import altair as alt

from trnkb.views import nbsetup


def test_setup_selects_the_svg_renderer_and_returns_the_kb():
    kb = nbsetup.setup()
    assert alt.renderers.active == "svg"
    assert "trainium3" in kb.ids("chips")


def test_answer_escapes_values(monkeypatch):
    shown = []
    monkeypatch.setattr(nbsetup, "display", shown.append)
    nbsetup.answer("It has <script>alert(1)</script> *cores*.", "Second.")
    text = shown[0].data
    assert text.startswith("**Answer.** ")
    assert "<script>" not in text and "\\<script\\>" in text and "\\*cores\\*" in text
