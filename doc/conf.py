# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of the skforget documentation.

Build with ``sphinx-build -W --keep-going -b html doc doc/_build/html``: warnings
are errors, and the example gallery is executed (each example runs in under a
minute), so a broken example or a stale cross-reference fails the build.
"""

import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "sphinxext"))

import skforget  # noqa: E402

project = "skforget"
author = "The skforget developers"
copyright = "The skforget developers"
version = release = skforget.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

# The living design specs (architecture, privacy accounting, certificates) are
# Markdown files read by MyST, so the docs show exactly the text the code follows.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# The specs number their own sections and start some at level 3 on purpose.
suppress_warnings = ["myst.header"]

templates_path = ["_templates"]
exclude_patterns = ["_build", "sphinxext", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip"]
root_doc = "index"
default_role = "literal"

# --- API reference -------------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"
autodoc_default_options = {"members": True}
# numpydoc writes the Parameters / Attributes tables; the class template lists
# methods itself, so numpydoc must not add a second, autosummary-based table.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# --- links to scikit-learn, NumPy, SciPy, pandas and Python ---------------------
INTERSPHINX = {
    "python": "https://docs.python.org/3/",
    "sklearn": "https://scikit-learn.org/stable/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "pandas": "https://pandas.pydata.org/docs/",
}


def _reachable(url, timeout=3.0):
    """Whether the documentation host answers (CI builds have no network)."""
    import socket
    from urllib.parse import urlsplit

    try:
        socket.create_connection((urlsplit(url).hostname, 443), timeout).close()
        return True
    except OSError:
        return False


def _intersphinx_mapping():
    """Inventories to link against: online, or cached by an earlier build.

    Offline, a project whose inventory is neither reachable nor cached is left
    out, with a note, instead of failing the warnings-as-errors build: its
    names are then shown as code without a link.
    """
    cache = HERE / "_build" / "doctrees" / "__intersphinx_cache__"
    mapping, missing = {}, []
    for name, url in INTERSPHINX.items():
        if (cache / f"{name}_objects.inv").is_file() or _reachable(url):
            mapping[name] = (url, None)
        else:
            missing.append(name)
    if missing:
        print(f"intersphinx: {', '.join(missing)} unreachable and not cached; "
              "their names are not linked in this build.")
    return mapping


intersphinx_mapping = _intersphinx_mapping()
intersphinx_timeout = 10

# --- HTML ----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skforget {version}"
html_static_path = ["_static"]
# Long code lines scroll inside their block, long names wrap in the right-hand
# column, instead of running past the page.
html_css_files = ["skforget.css"]
html_show_sourcelink = False
# "certify()" rather than "NoisyGDClassifier.certify()" in the page contents.
toc_object_entries_show_parents = "hide"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_context = {"default_mode": "light"}

# --- example gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "gallery_order.ExampleOrder",
    "download_all_examples": False,
    "remove_config_comments": True,
    "doc_module": ("skforget",),
    "backreferences_dir": "generated/backreferences",
    "show_memory": False,
    "min_reported_time": 1,
    # A failing example fails the build: the gallery is the docs' smoke test.
    "only_warn_on_example_error": False,
    "abort_on_example_error": False,
}

# Examples run with Agg and must not open windows.
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")


def _skip_sklearn_members(app, what, name, obj, skip, options):
    """Document skforget's own methods only, not those inherited from scikit-learn.

    ``get_params``, ``score``, metadata routing and the like are documented by
    scikit-learn, and their docstrings point into scikit-learn's own glossary.
    """
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn") or (name.startswith("set_")
                                         and name.endswith("_request")):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_members)
