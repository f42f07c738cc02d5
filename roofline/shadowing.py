"""Is `import kernels` / `import profiler` / `import reports` this project's package, or another
package of the same name installed in the environment (PyPI's `kernels` from Hugging Face, PyPI's
`profiler`)? Checked without importing them, so the answer comes before anything can crash."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

# each package of this distribution, with a module only ours has
OWN_PACKAGES = {"kernels": "registry.py", "profiler": "rundir.py", "reports": "text.py"}
KNOWN_FOREIGN = {"kernels": "Hugging Face's `kernels` from PyPI", "profiler": "PyPI's `profiler`"}


@dataclass(frozen=True)
class Shadowed:
    package: str
    found: str  # where `import <package>` resolves
    expected: str  # where this project's package is
    distribution: str | None  # the installed distribution that owns the foreign one, if known
    text: str | None = None  # a message of its own (the clone folder case)

    def message(self) -> str:
        if self.text:
            return self.text
        if self.distribution:
            who = f"the installed distribution `{self.distribution}`"
            if self.distribution.lower() == self.package and self.package in KNOWN_FOREIGN:
                who += f" ({KNOWN_FOREIGN[self.package]})"
            fix = f"pip uninstall {self.distribution}"
        else:
            who = "another package of that name" + (
                f" (e.g. {KNOWN_FOREIGN[self.package]})" if self.package in KNOWN_FOREIGN else ""
            )
            fix = f"remove {self.found} from the import path (PYTHONPATH, the current folder)"
        return (
            f"`import {self.package}` finds {self.found}, not roofline's own {self.package} package "
            f"({self.expected}): {who} shadows it. Fix: {fix}, or install roofline in a virtual "
            "environment of its own"
        )


def _location(name: str) -> Path | None:
    module = sys.modules.get(name)
    if module is not None:
        origin = getattr(module, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
        if spec is not None and origin in (None, "namespace") and spec.submodule_search_locations:
            return Path(list(spec.submodule_search_locations)[0])
    return Path(origin).parent if origin else None


def _distribution(name: str) -> str | None:
    try:
        owners = [d for d in packages_distributions().get(name, []) if d.lower() != "roofline"]
    except Exception:  # noqa: BLE001 - a broken metadata entry must not stop the check
        return None
    return owners[0] if owners else None


def roofline_as_namespace() -> Shadowed | None:
    """`roofline` itself imported as a namespace package: run from the folder that holds a checkout
    named `roofline` (the default clone name), Python takes that folder for the package, so the real
    package's __init__ never runs (`roofline.load`: AttributeError) and its bundled data is looked for
    in the wrong folder (the sample: not found)."""
    module = sys.modules.get("roofline")
    if module is None or getattr(module, "__file__", None) is not None:
        return None
    own = Path(__file__).resolve().parent
    folders = [Path(p) for p in getattr(module, "__path__", []) if Path(p).resolve() != own]
    if not folders:
        return None
    folder = folders[0]
    return Shadowed(
        "roofline",
        str(folder),
        str(own),
        None,
        text=(
            f"`import roofline` finds the folder {folder} (a checkout named `roofline` in the current folder?) "
            f"as a namespace package instead of the roofline package ({own}), so its API and bundled data "
            f"are not found. Fix: run roofline from another folder, or from inside the checkout (cd {folder})"
        ),
    )


def shadowed_packages() -> list[Shadowed]:
    """This project's packages that the import system resolves to something else."""
    root = Path(__file__).resolve().parent.parent  # the folder holding roofline/ and its siblings
    own = roofline_as_namespace()
    out = [own] if own else []
    for name, marker in OWN_PACKAGES.items():
        expected = root / name
        found = _location(name)
        if found is None:
            continue  # absent: the import fails with Python's own clear error
        found = found.resolve()
        if found == expected.resolve() and (found / marker).exists():
            continue
        out.append(Shadowed(name, str(found), str(expected), _distribution(name)))
    return out


def exit_if_shadowed(argv: list[str], doctor: Callable[[list[str]], int] | None = None) -> None:
    """For the CLI entry, before it imports kernels or profiler: one line per shadowed package and
    exit 2 (or, for `roofline doctor`, `doctor(argv)`'s exit code: it reports it among its checks)."""
    shadowed = shadowed_packages()
    if not shadowed:
        return
    if argv[:1] == ["doctor"] and doctor is not None:
        sys.exit(doctor(argv[1:]))
    for s in shadowed:
        print(f"Error: {s.message()}", file=sys.stderr)
    sys.exit(2)
