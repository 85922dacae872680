# Sphinx configuration for the trnkb site. Built by `python -m trnkb.site build/site`,
# which stages these sources with the executed notebooks and the generated pages first.
project = "trnkb"
author = "trnkb developers"
copyright = "trnkb developers"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]

# Notebooks are committed already executed; nbval is the one place where they run.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = []  # no dollar math: spec text never turns into MathJax

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

exclude_patterns = ["_build", ".doctrees", "**.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type"]

html_theme = "pydata_sphinx_theme"
html_title = "trnkb"
html_show_sphinx = False
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = ["_static"]
html_css_files = ["trnkb.css"]
html_sidebars = {"**": []}
