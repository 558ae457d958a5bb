"""Smoke test of the package as it ships (``make test``: the no-compiler pass runs it).

Run from outside the source tree with the Python of a fresh venv into which the wheel built
from the sdist was installed::

    python wheel_smoke.py SDIST WHEEL

It checks the sdist (LICENSE, README, every docs page, and that every relative link of the
README and the docs resolves to a file inside it; the SPDX license in its metadata), the wheel
(package data, the license file, metadata: license expression, classifiers, extras, the console
script) and the installed package (imported from the venv, not from the source tree; a filter
built, saved, loaded; the installed ``bloomkit`` command builds a file that loads).
"""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
EXTRAS = {"pandas", "dask", "experiments", "serve", "test", "bench"}


def check_sdist(path: Path) -> None:
    with tarfile.open(path) as tar:
        names = {PurePosixPath(m.name) for m in tar.getmembers()}
        root = next(iter(names)).parts[0]
        files = {PurePosixPath(*n.parts[1:]) for n in names if len(n.parts) > 1}
        for need in ("LICENSE", "README.md", "pyproject.toml", "setup.py", "src/bloomkit/_speedups.c",
                     "src/bloomkit/py.typed", "docs/format.md", "tests/test_docs.py"):
            assert PurePosixPath(need) in files, f"{need} missing from {path.name}"
        assert not any(n.suffix in (".so", ".pyc") for n in files), "built files in the sdist"
        pages = [f for f in files if f.suffix == ".md" and (f.parent == PurePosixPath("docs") or str(f) == "README.md")]
        assert len(pages) > 10, pages
        broken = []
        for page in pages:
            fh = tar.extractfile(f"{root}/{page}")
            assert fh is not None
            for target in LINK.findall(fh.read().decode("utf-8")):
                if "://" in target or target.startswith("mailto:"):
                    continue
                resolved = PurePosixPath(os.path.normpath(str(page.parent / target)))
                if resolved not in files and not any(f.is_relative_to(resolved) for f in files):
                    broken.append(f"{page}: {target}")
        assert not broken, f"links that break in the sdist: {broken}"
        meta = tar.extractfile(f"{root}/PKG-INFO")
        assert meta is not None
        info = email.message_from_bytes(meta.read())
        assert info["License-Expression"] == "MIT", info["License-Expression"]


def check_wheel(path: Path) -> None:
    with zipfile.ZipFile(path) as whl:
        names = set(whl.namelist())
        for need in ("bloomkit/__init__.py", "bloomkit/py.typed", "bloomkit/serve/table1.json",
                     "bloomkit/_speedups.c"):
            assert need in names, f"{need} missing from {path.name}"
        assert any(n.startswith("bloomkit/serve/static/") for n in names), "the service page is missing"
        dist = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        assert f"{dist}/licenses/LICENSE" in names, "LICENSE missing from the wheel"
        assert "MIT License" in whl.read(f"{dist}/licenses/LICENSE").decode()
        meta = email.message_from_bytes(whl.read(f"{dist}/METADATA"))
        assert meta["License-Expression"] == "MIT" and not meta.get_all("License"), meta["License-Expression"]
        classifiers = meta.get_all("Classifier") or []
        assert "Typing :: Typed" in classifiers and not any(c.startswith("License ::") for c in classifiers)
        assert set(meta.get_all("Provides-Extra") or []) >= EXTRAS, meta.get_all("Provides-Extra")
        assert meta["Requires-Python"] == ">=3.11"
        scripts = whl.read(f"{dist}/entry_points.txt").decode()
        assert re.search(r"^bloomkit = bloomkit\.cli:main$", scripts, re.M), scripts


def check_installed() -> None:
    import bloomkit

    assert Path(bloomkit.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), bloomkit.__file__
    from importlib.metadata import metadata

    assert metadata("bloomkit")["License-Expression"] == "MIT"
    assert bloomkit.info()["version"] == bloomkit.__version__
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        bf = bloomkit.BloomFilter(capacity=1000, fpr=0.01)
        bf.add_many([f"k{i}" for i in range(100)])
        bf.save("f.bkf")
        assert bloomkit.load("f.bkf") == bf and "k7" in bf
        Path("words.txt").write_text("".join(f"w{i}\n" for i in range(100)))
        cli = Path(sys.executable).with_name("bloomkit")  # the console script the wheel installed
        subprocess.run([str(cli), "build", "words.txt", "-o", "w.bkf"], check=True, capture_output=True)
        built = bloomkit.load("w.bkf")
        assert "w7" in built and built.contains_many([f"w{i}" for i in range(100)]).all()


def main(argv: list[str]) -> int:
    sdist, wheel = (Path(a).resolve() for a in argv)
    check_sdist(sdist)
    check_wheel(wheel)
    check_installed()
    print(f"wheel smoke test passed: {sdist.name}, {wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
