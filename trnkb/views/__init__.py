"""Presenting results: tables, charts, markdown, notebook setup and execution, diffs.

May import: the models and :mod:`trnkb.audit`. Imported by the site, the CLI and the
notebooks.
"""
