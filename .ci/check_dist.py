"""Check what the sdist and the wheel hold, and print their sizes.

The wheel must carry the extension, every module, the type stubs and the licence, and nothing of
tests, bench or docs; the sdist must carry every file a source build reads (the meson.build files,
sources and headers) and nothing else.
"""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NEVER = ("tests/", "bench/", "docs/", "examples/", ".ci/")


def fail(message):
    sys.exit(f"check_dist: {message}")


def check_wheel(path):
    names = zipfile.ZipFile(path).namelist()
    modules = {str(p.relative_to(REPO / "src")) for p in (REPO / "src" / "pyinterp").rglob("*")
               if p.suffix in (".py", ".pyi", ".typed")}
    missing = modules - set(names)
    if missing:
        fail(f"{path.name} lacks {sorted(missing)}")
    for want in ("pyinterp/_version.py", "LICENSE"):
        if not any(n.endswith(want) for n in names):
            fail(f"{path.name} lacks {want}")
    if not any(n.startswith("pyinterp/_core.") and n.endswith(".so") for n in names):
        fail(f"{path.name} lacks the compiled extension")
    stray = [n for n in names if n.startswith(NEVER) or "/tests/" in n]
    if stray:
        fail(f"{path.name} holds files it must not: {stray[:5]}")


def check_sdist(path):
    with tarfile.open(path) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    tracked = subprocess.run(["git", "ls-files", "src"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    needed = set(tracked) | {"meson.build", "pyproject.toml", "README.md", "LICENSE"}
    if needed - names:
        fail(f"{path.name} lacks {sorted(needed - names)}")
    extra = names - needed - {"PKG-INFO"}
    if extra:
        fail(f"{path.name} holds files a build does not need: {sorted(extra)[:5]}")


def main(paths):
    for p in map(Path, paths):
        if p.suffix == ".whl":
            check_wheel(p)
        elif p.name.endswith(".tar.gz"):
            check_sdist(p)
        else:
            fail(f"unknown distribution {p}")
        print(f"check_dist: {p.name} ok, {p.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main(sys.argv[1:])
