"""The file order of a repository whose copy lacks a module: an import of the missing module is no
dependency, so it makes no false cycle through the package's ``__init__`` (which imports the
importer) and the package's modules come before its ``__init__``."""

from __future__ import annotations

from curation.mixture.repo_deps import dependency_order, file_deps

FILES = {
    "README.md": "# demo\n",
    "pkg/__init__.py": "from .accessors import Accessor\nfrom .core import Core\n",
    "pkg/accessors.py": "from pkg.sub import helper  # pkg/sub.py is not in this copy\nfrom pkg.core import Core\n",
    "pkg/core.py": "class Core: ...\n",
    "tools.py": "import os.path\n",
}


def test_a_missing_submodule_is_no_import_of_its_package_init():
    deps = file_deps(list(FILES), list(FILES.values()))
    assert deps["pkg/accessors.py"] == {"pkg/core.py"}
    assert dependency_order(list(FILES), list(FILES.values())) == [
        "README.md",
        "pkg/core.py",
        "pkg/accessors.py",
        "pkg/__init__.py",
        "tools.py",
    ]


def test_submodules_imported_from_a_package_are_the_imports_not_its_init():
    files = {
        "pkg/__init__.py": "from .accessors import Accessor\n",
        "pkg/accessors.py": "from . import core\n",
        "pkg/core.py": "X = 1\n",
        "pkg/plain.py": "from . import VERSION\n",
    }
    deps = file_deps(list(files), list(files.values()))
    assert deps["pkg/accessors.py"] == {"pkg/core.py"}
    assert deps["pkg/plain.py"] == {"pkg/__init__.py"}  # a name the package defines: its __init__
    assert dependency_order(list(files), list(files.values())) == [
        "pkg/core.py",
        "pkg/accessors.py",
        "pkg/__init__.py",
        "pkg/plain.py",
    ]


def test_a_present_module_and_a_plain_module_prefix_are_still_imports():
    files = {
        "pkg/__init__.py": "",
        "pkg/sub.py": "Y = 1\n",
        "a.py": "from pkg.sub import Y\n",
        "tools.py": "T = 1\n",
        "b.py": "import tools.extra\n",
    }
    deps = file_deps(list(files), list(files.values()))
    assert deps["a.py"] == {"pkg/sub.py"}
    assert deps["b.py"] == {"tools.py"}  # a module file, not a package: os.path style
