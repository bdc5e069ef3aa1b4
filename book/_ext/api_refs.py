"""The API reference: cross-references to slrlib objects by the names they are imported under.

The docstrings cite objects the way code uses them: ``:func:`slrlib.oracle_risk``` (a
re-export of :func:`slrlib.core.risk.oracle_risk`), ``:func:`slrlib.experiments.match_heads```
(defined in :mod:`slrlib.experiments.heads`), or a bare ``:class:`SLRTask``` inside a module
that imports it. The API reference documents each object once, where it is defined. When
Sphinx finds no target, this handler imports the name (from the module the reference sits in,
or as a dotted path), reads the object's own ``__module__`` and ``__qualname__``, and retries
the reference with that canonical name. A name that imports to nothing stays unresolved, so
nitpicky builds still fail on a stale reference.
"""

from __future__ import annotations

import importlib
import inspect


def _import_dotted(path: str):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _canonical(obj) -> str | None:
    if inspect.ismodule(obj):
        return obj.__name__
    owner = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    if owner and qual and owner.startswith("slrlib"):
        return f"{owner}.{qual}"
    return None


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    here = node.get("py:module") or ""
    klass = node.get("py:class")
    candidates = []
    if here:
        module = _import_dotted(here)
        head = target.split(".")[0]
        if module is not None and hasattr(module, head):
            candidates.append(_import_dotted(f"{here}.{target}"))
        if klass:
            candidates.append(_import_dotted(f"{here}.{klass}.{target}"))
    if target.startswith("slrlib"):
        candidates.append(_import_dotted(target))
    domain = env.get_domain("py")
    for obj in candidates:
        name = _canonical(obj) if obj is not None else None
        if not name or name == target:
            continue
        node["reftarget"] = name
        for key in ("py:module", "py:class"):
            node.attributes.pop(key, None)
        found = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], name, node, contnode)
        if found is None and node["reftype"] in ("class", "func", "meth", "data", "attr", "obj"):
            found = domain.resolve_any_xref(env, node["refdoc"], app.builder, name, node, contnode)
            found = found[0][1] if found else None
        if found is not None:
            return found
        node["reftarget"] = target
    return None


_ORIGINAL: dict[str, list[str]] = {}


def _save_attribute_docstring(app, what, name, obj, options, lines):
    if what in ("attribute", "data", "property"):
        _ORIGINAL[name] = list(lines)


def _restore_attribute_docstring(app, what, name, obj, options, lines):
    """Napoleon reads ``text: more`` on the first line of a data or attribute docstring as
    ``type: description``; ours are sentences (``#: The run: ...``): keep them as written."""
    original = _ORIGINAL.pop(name, None)
    if original is not None and any(line.startswith(":type:") for line in lines):
        lines[:] = original


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("missing-reference", _missing_reference)
    # around sphinx.ext.napoleon, which listens at the default priority 500
    app.connect("autodoc-process-docstring", _save_attribute_docstring, priority=400)
    app.connect("autodoc-process-docstring", _restore_attribute_docstring, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
