"""Sphinx configuration of pyinterp's documentation site.

Build: ``pip install ".[docs]" && sphinx-build -W --keep-going -b html docs docs/_build/html``.
The gallery's examples (examples/) run during the build; where ../shared/data is absent they use
simulated stand-ins (see examples/README.txt)."""

import os

import pyinterp

project = "pyinterp"
author = "the pyinterp developers"
copyright = "2026, the pyinterp developers"
release = pyinterp.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",  # the user guide, design notes and results pages are Markdown
    "sphinx_design",  # the landing page's cards
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "**/README.md"]
templates_path = ["_templates"]

# The API reference: one page per public name, generated from its docstring
autosummary_generate = True


def _own_members(module, name, members):
    """The members a class defines in pyinterp (its own or a pyinterp base's), not scikit-learn's."""
    import importlib

    cls = getattr(importlib.import_module(module), name)
    own = []
    for member in members:
        for klass in cls.__mro__:
            if member in vars(klass):
                if klass.__module__.startswith("pyinterp") and not member.startswith("_"):
                    own.append(member)
                break
    return own


autosummary_context = {"own_members": _own_members}
# a function in the configuration cannot be pickled with the environment: Sphinx rereads it each build
suppress_warnings = ["config.cache"]
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False  # the class template lists them
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_heading_anchors = 3  # the pages link to each other's sections as page.md#section
myst_enable_extensions = ["colon_fence", "dollarmath"]

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "run_stale_examples": True,
    "matplotlib_animations": False,
}
os.environ.setdefault("MPLBACKEND", "Agg")

html_theme = "pydata_sphinx_theme"
html_title = f"pyinterp {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # the page's contents go under the section navigation: without a right column the article
    # is ~900 px wide at 1280 px, and the guide's code lines (~100 characters) fit
    "secondary_sidebar_items": [],
}
html_sidebars = {"**": ["sidebar-nav-bs", "page-toc"]}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["custom.css"]
