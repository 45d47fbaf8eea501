"""Every public name has a numpydoc docstring whose Examples run, and is in the API reference.

The public names are the ``__all__`` of the public modules (``PUBLIC_MODULES``); each is checked once,
under the module that defines it or, for names defined in private modules, the first public module
that exports it. A class's own methods (those defined in pyinterp, not inherited from scikit-learn)
are checked with it."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

PUBLIC_MODULES = ["pyinterp", "pyinterp.forest", "pyinterp.importance", "pyinterp.significance",
                  "pyinterp.interactions", "pyinterp.dictionary", "pyinterp.skinny", "pyinterp.partitioned",
                  "pyinterp.io", "pyinterp.plotting", "pyinterp.datasets", "pyinterp.metrics"]
# numpydoc's checks that hold for every public callable: a docstring, every parameter documented and
# none unknown, a Returns section where the function returns something, an Examples section
REQUIRED = {"GL08", "PR01", "PR02", "RT01", "EX01"}
API_DIR = Path(__file__).resolve().parents[1] / "docs" / "api"


def _public_objects():
    """{qualified name: object}, each object once, named by its home module."""
    found, seen = {}, set()
    for module_name in sorted(PUBLIC_MODULES, key=lambda m: (m == "pyinterp", m)):  # submodules first
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.ismodule(value) or name == "__version__" or id(value) in seen:
                continue
            if not (inspect.isclass(value) or inspect.isroutine(value)):
                continue  # constants (PAIR_FEATURES, DEFAULT_SPACE) are documented on their pages
            seen.add(id(value))
            home = getattr(value, "__module__", module_name)
            public_home = min((m for m in PUBLIC_MODULES if home == m or home.startswith(m + ".")),
                              key=lambda m: -len(m), default=module_name)
            if public_home == "pyinterp" or not hasattr(importlib.import_module(public_home), name):
                public_home = module_name
            found[f"{public_home}.{name}"] = value
    return found


PUBLIC = _public_objects()


def _members(qualified, cls):
    """The public methods and properties a pyinterp class defines (its own or a pyinterp base's)."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("pyinterp"):
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, (property, classmethod, staticmethod)) or inspect.isfunction(value):
                yield f"{qualified}.{attr}", value


def _defined_at(obj):
    """Where numpydoc finds the object: the public name can shadow a submodule of the same name
    (pyinterp.interactions.dwp is a module and the function it exports)."""
    return f"{obj.__module__}.{obj.__qualname__}"


CALLABLES = {}  # public name -> the dotted path numpydoc validates
for _q, _obj in PUBLIC.items():
    CALLABLES[_q] = _defined_at(_obj)
    if inspect.isclass(_obj):
        for _m, _v in _members(_q, _obj):
            if not isinstance(_v, property):
                CALLABLES[_m] = f"{_defined_at(_obj)}.{_m.rsplit('.', 1)[1]}"
PROPERTIES = sorted(m for q, obj in PUBLIC.items() if inspect.isclass(obj)
                    for m, v in _members(q, obj) if isinstance(v, property))


def test_the_public_names_are_many():
    # a guard against the enumeration finding nothing, which would pass every test below
    assert len(PUBLIC) > 80 and len(CALLABLES) > 140


@pytest.mark.no_core
@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_numpydoc_sections(name):
    validate = pytest.importorskip("numpydoc.validate")
    errors = [f"{code}: {message}" for code, message in validate.validate(CALLABLES[name])["errors"]
              if code in REQUIRED]
    assert not errors, "\n".join(errors)


@pytest.mark.no_core
@pytest.mark.parametrize("name", PROPERTIES)
def test_properties_have_a_docstring(name):
    owner, attr = name.rsplit(".", 1)
    cls = PUBLIC[owner]
    assert inspect.getdoc(getattr(cls, attr)), f"{name} has no docstring"


def _doctests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = {}
    for qualified, obj in PUBLIC.items():
        # a class's own methods are found with it; those of its private pyinterp bases by name
        found = [*finder.find(obj, qualified, globs={})]
        if inspect.isclass(obj):
            for name, member in _members(qualified, obj):
                function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                found += finder.find(function, name, globs={})
        for test in found:
            if test.examples:
                tests.setdefault(test.name, test)
    return tests


DOCTESTS = _doctests()


@pytest.mark.parametrize("name", sorted(DOCTESTS))
def test_examples_run(name, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    test = DOCTESTS[name]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)


def test_every_public_name_is_in_the_api_reference():
    if not API_DIR.is_dir():
        pytest.skip("docs/ is not beside the tests")
    text = "\n".join(p.read_text() for p in API_DIR.glob("*.rst"))
    listed = set()
    for block in re.findall(r"\.\. currentmodule:: (\S+)(.*?)(?=\.\. currentmodule::|\Z)", text, re.S):
        module, body = block
        listed |= {f"{module}.{n}" for n in re.findall(r"^\s{3,}([A-Za-z_][\w.]*)\s*$", body, re.M)}
    missing = sorted(set(PUBLIC) - listed)
    assert not missing, f"not in docs/api/*.rst: {missing}"
