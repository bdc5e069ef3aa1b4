"""The library's architecture, checked on its source: layers, public APIs, no private imports.

Read with ``ast`` (nothing is imported), so a violation fails here with the file and line,
whatever the tests of behaviour say.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "slrlib"

#: What each layer of the library may import from slrlib (besides itself). A layer never
#: imports one below it, and none imports the book.
LAYERS = {
    "validation": set(),
    "threefry": set(),
    "extras": set(),
    "core": {"validation"},
    "training": {"validation", "core", "extras"},
    "experiments": {"validation", "core", "training", "case_studies"},
    "plots": {"validation", "core", "training", "experiments", "case_studies", "extras"},
    "figures": {"validation", "core", "training", "experiments", "plots", "case_studies", "extras"},
    "case_studies": {"validation", "extras"},
    "widgets": {"plots", "extras"},  # the book's figure sizes and legibility (slrlib.plots.style)
    "verify": set(),
    "book": {"validation", "core", "training", "experiments", "plots", "figures", "case_studies", "widgets",
             "verify"},
    # the package itself re-exports the library (loaded on first use); the command line also registers the
    # book's figures, and sets up JAX for its own process (float64, slrlib.threefry)
    "__init__": {"validation", "threefry", "core", "training", "experiments", "plots", "figures",
                 "case_studies", "widgets", "extras"},
    "__main__": {"figures", "book", "extras", "threefry"},
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(dotted: str) -> str:
    parts = dotted.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def _imports(tree: ast.AST, here: str):
    """(line, module imported, names imported) for every slrlib import, relative ones resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                mod = ".".join(base + ([mod] if mod else []))
            if mod == "slrlib" or mod.startswith("slrlib."):
                yield node.lineno, mod, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "slrlib" or a.name.startswith("slrlib."):
                    yield node.lineno, a.name, []
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                name = node.args[0].value
                if name.startswith("slrlib"):
                    yield node.lineno, name, []


def _is_package_init(path: Path) -> bool:
    return path.name == "__init__.py"


def _private_violations(source: str, here: str) -> list[str]:
    """Imports of private modules or names of other modules, and ``module._name`` uses."""
    tree = ast.parse(source)
    bad = []
    for line, mod, names in _imports(tree, here):
        if any(part.startswith("_") and part not in ("__init__", "__main__") for part in mod.split(".")):
            bad.append(f"line {line}: imports the private module {mod}")
        for name in names:
            if name.startswith("_") and not name.startswith("__") and mod != here:
                bad.append(f"line {line}: imports the private name {name} from {mod}")
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("slrlib"):
            aliases |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("slrlib")}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in aliases):
            bad.append(f"line {node.lineno}: uses the private name {node.value.id}.{node.attr}")
    return bad


def _layer_violations(source: str, here: str) -> list[str]:
    """Imports of slrlib layers that the module's own layer may not import."""
    layer = _layer(here)
    allowed = LAYERS[layer] | {layer}
    bad = []
    for line, mod, names in _imports(ast.parse(source), here):
        parts = mod.split(".")
        targets = [parts[1]] if len(parts) > 1 else [n for n in names if n in LAYERS]
        for target in targets:
            if target not in allowed:
                bad.append(f"line {line}: {layer} imports {mod}" + (f" ({', '.join(names)})" if names else ""))
    return bad


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_names_of_other_modules(path):
    """No ``from slrlib.x import _y``, no ``import slrlib._x``, no ``module._y`` on an imported module."""
    bad = _private_violations(path.read_text(), _dotted(path))
    assert not bad, f"{path.relative_to(ROOT)}:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_layers(path):
    """Each module imports only the layers above its own; the library never imports the book."""
    bad = _layer_violations(path.read_text(), _dotted(path))
    assert not bad, f"{path.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_the_architecture_checks_can_fail():
    """The checks catch what they are for, in every form: a private name, a private module,
    a private attribute, a library module importing the book (also through importlib), a
    layer importing one below it."""
    source = (
        "import importlib\n"
        "from slrlib.core.risk import _helper\n"
        "from slrlib import _secret\n"
        "import slrlib.core.task as T\n"
        "x = T._sample\n"
        "from slrlib.book import ch08_beyond\n"
        "from slrlib.training.pgd import pgd\n"
        "importlib.import_module('slrlib.book.ch07_theorem5')\n"
    )
    private = _private_violations(source, "slrlib.core.fake")
    assert len(private) == 3, private
    layers = _layer_violations(source, "slrlib.core.fake")
    assert [line.split(":")[0] for line in layers] == ["line 6", "line 7", "line 8"], layers
    assert not _layer_violations("from slrlib.core.risk import population_risk\n", "slrlib.book.ch99")


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if not p.name.startswith("__main__")],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_one_public_api_per_module(path):
    """Every module lists its public API in ``__all__``: each public function and class it
    defines is listed, and every listed name exists."""
    dotted = _dotted(path)
    module = importlib.import_module(dotted)
    assert hasattr(module, "__all__"), f"{dotted} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{dotted}.__all__ lists names it does not define: {missing}"
    tree = ast.parse(path.read_text())
    defined = [n.name for n in tree.body
               if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
    unlisted = [n for n in defined if n not in module.__all__]
    assert not unlisted, f"{dotted} defines public names missing from __all__: {unlisted}"


def _missing_annotations(source: str) -> tuple[int, list[tuple[int, str]]]:
    """The public functions and the public methods of public classes defined at the top of a module
    (properties included): how many there are, and ``(line, name)`` for each one missing the
    annotation of a parameter (``self`` and ``cls`` of methods excepted) or of its return."""
    checked, missing = 0, []

    def check(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, method: bool) -> None:
        nonlocal checked
        checked += 1
        a = node.args
        params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p is not None]
        if method:
            params = [p for p in params if p.arg not in ("self", "cls")]
        if node.returns is None or any(p.annotation is None for p in params):
            missing.append((node.lineno, name))

    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.parse(source).body:
        if isinstance(node, functions) and not node.name.startswith("_"):
            check(node, node.name, method=False)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, functions) and not item.name.startswith("_"):
                    check(item, f"{node.name}.{item.name}", method=True)
    return checked, missing


def test_library_functions_are_annotated():
    """Every public function, and every public method of a public class, of the library layers
    (all of slrlib but the book) annotates each parameter (but ``self``, ``cls``) and its return."""
    sample = (
        "def ok(x: int, *a: int, k: str = '', **kw: float) -> int: ...\n"
        "def no_return(x: int): ...\n"
        "def no_param(x, y: int) -> int: ...\n"
        "def no_kwargs(**kw) -> None: ...\n"
        "def _private(x): ...\n"
        "class C:\n"
        "    def ok(self, x: int) -> int: ...\n"
        "    @property\n"
        "    def prop(self): ...\n"
        "    def __init__(self, x): ...\n"
    )
    assert _missing_annotations(sample) == (6, [(2, "no_return"), (3, "no_param"), (4, "no_kwargs"), (9, "C.prop")])

    checked, bad = 0, []
    modules = [p for p in _modules() if "book" not in p.relative_to(ROOT).parts]
    for path in modules:
        n, missing = _missing_annotations(path.read_text())
        checked += n
        bad += [f"{path.relative_to(ROOT)}:{line} {name}" for line, name in missing]
    print(f"{checked} public functions and methods in {len(modules)} modules of the library layers")
    layers = {_dotted(p).split(".")[1] for p in modules if "." in _dotted(p)}
    assert layers >= {"core", "training", "experiments", "plots", "figures", "case_studies"}, layers
    assert not bad, f"{len(bad)} of {checked} public functions and methods lack annotations:\n" + "\n".join(bad)
