"""The package as PyPI and pip see it: the sdist and the wheel's metadata (project URLs, authors, classifiers
that are real trove classifiers), a README whose images show on PyPI, the CI workflow that builds manylinux
wheels with cibuildwheel, and an sdist that installs without a C compiler and scores on numpy as the
compiled kernels do.

The builds call setuptools' own backend hooks (PEP 517) in this environment, not in an isolated one: no
registry is needed, and the test extra brings the setuptools that pyproject.toml's build-system asks for.
"""

from __future__ import annotations

import ast
import email
import email.message
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import tomllib

from tests.conftest import SMALL_DOCS, build_from_texts

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "sentret_core")  # what the sdist is made from
REPO = "https://github.com/sentret/sentret"
RAW = "https://raw.githubusercontent.com/sentret/sentret/main/"  # README images, as PyPI's page loads them
WORKFLOW = ROOT / ".github" / "workflows" / "wheels.yml"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PYTHONS = ("3.10", "3.11", "3.12", "3.13")

IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)")
HTML_IMAGE = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)", re.IGNORECASE)


def extension_modules() -> list[str]:
    """The names of setup.py's ``Extension(...)``s, read from its source."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Extension"]
    return [c.args[0].value for c in calls if isinstance(c.args[0], ast.Constant)]


def image_links(markdown: str) -> list[str]:
    return IMAGE.findall(markdown) + HTML_IMAGE.findall(markdown)


def unresolved_images(markdown: str, root: Path) -> list[str]:
    """Image links that PyPI cannot show (not an https address) or that name a file ``root`` lacks."""
    found = []
    for link in image_links(markdown):
        missing = link.startswith(RAW) and not (root / link.removeprefix(RAW).partition("?")[0]).is_file()
        if not link.startswith("https://") or missing:
            found.append(link)
    return found


def copy_sources(dest: Path) -> Path:
    """The sources alone, without this checkout's builds (*.so, build/, *.egg-info)."""
    dest.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
        else:
            shutil.copy2(ROOT / name, dest / name)
    return dest


def backend(source: Path, hook: str, out: Path) -> Path:
    """Run ``setuptools.build_meta.<hook>(out)`` in ``source`` in another process; the path it made."""
    out.mkdir(parents=True, exist_ok=True)
    call = f"from setuptools import build_meta as b; print(b.{hook}({str(out)!r}))"
    done = subprocess.run([sys.executable, "-c", call], cwd=source, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, email.message.Message, email.message.Message]:
    """The sdist, its PKG-INFO and the wheel's METADATA."""
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    assert major >= 77, f"setuptools {setuptools.__version__}: the test extra asks for >= 77 (pip install -e '.[test]')"
    scratch = tmp_path_factory.mktemp("packaging")
    source = copy_sources(scratch / "source")
    sdist = backend(source, "build_sdist", scratch / "dist")
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/PKG-INFO")
        assert member is not None
        pkg_info = email.message_from_string(member.read().decode("utf-8"))
    metadata = backend(source, "prepare_metadata_for_build_wheel", scratch / "metadata") / "METADATA"
    return sdist, pkg_info, email.message_from_string(metadata.read_text(encoding="utf-8"))


def test_the_metadata_names_the_project_its_authors_and_its_classifiers(
    built: tuple[Path, email.message.Message, email.message.Message],
) -> None:
    _, pkg_info, metadata = built
    urls = {"Homepage": REPO, "Documentation": f"{REPO}/tree/main/docs", "Source": REPO,
            "Issues": f"{REPO}/issues", "Changelog": f"{REPO}/blob/main/CHANGELOG.md"}
    for meta in (pkg_info, metadata):  # the sdist's and the wheel's say the same
        assert dict(u.split(", ", 1) for u in meta.get_all("Project-URL", [])) == urls
        assert meta["Author"] == meta["Maintainer"] == "the sentret developers"
        assert "entity support sentences" in meta["Keywords"].split(",")
        assert meta.get_all("Classifier") == PYPROJECT["project"]["classifiers"]
        assert meta["License-Expression"] == "MIT"
        assert meta["Requires-Python"] == ">=3.10"
        assert meta["Description-Content-Type"] == "text/markdown"
    classifiers = metadata.get_all("Classifier")
    assert {"Intended Audience :: Science/Research", "Topic :: Scientific/Engineering :: Information Analysis",
            "Topic :: Text Processing :: Indexing", "Operating System :: POSIX :: Linux"} <= set(classifiers)
    # a License classifier beside an SPDX `license = "MIT"` is an error for setuptools >= 77 (PEP 639)
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert [c.rsplit(" ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
            ] == list(PYTHONS)
    # the CLI the wheel installs
    assert PYPROJECT["project"]["scripts"] == {"sentret": "sentret_core.cli.entry:main"}


def test_every_classifier_is_a_trove_classifier() -> None:
    trove = pytest.importorskip("trove_classifiers", reason="trove-classifiers is in the test extra")
    unknown = [c for c in PYPROJECT["project"]["classifiers"] if c not in trove.classifiers]
    assert unknown == []
    assert not [c for c in PYPROJECT["project"]["classifiers"] if c in trove.deprecated_classifiers]


def test_the_long_description_is_the_readme_and_its_images_show_on_pypi(
    built: tuple[Path, email.message.Message, email.message.Message],
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    _, _, metadata = built
    assert metadata.get_payload().strip() == readme.strip()
    assert len(image_links(readme)) >= 6  # the screenshots' table
    assert unresolved_images(readme, ROOT) == []


def test_the_image_check_finds_relative_and_missing_images(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.png").write_bytes(b"")
    text = (f"![a]({RAW}docs/a.png) ![b](docs/a.png) ![c](./docs/a.png) ![d]({RAW}docs/gone.png) "
            '![e](https://example.org/x.png) <img src="docs/a.png" width=10> ![f](http://x.org/y.png)')
    assert unresolved_images(text, tmp_path) == ["docs/a.png", "./docs/a.png", f"{RAW}docs/gone.png",
                                                 "http://x.org/y.png", "docs/a.png"]


def test_the_sdist_holds_the_kernels_sources_and_no_build(
    built: tuple[Path, email.message.Message, email.message.Message],
) -> None:
    sdist, _, _ = built
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert {"setup.py", "pyproject.toml", "README.md", "LICENSE", "sentret_core/py.typed",
            "sentret_core/ui/queries/demo.txt", "sentret_core/models/bm25/_saturated.c",
            "sentret_core/models/bm25/_saturated.h", "sentret_core/models/arrays/_sorted.c"} <= names
    assert not [n for n in names if n.endswith((".so", ".pyc", ".pyd")) or "__pycache__" in n]


def _workflow() -> dict[Any, Any]:
    yaml = pytest.importorskip("yaml", reason="PyYAML is in the test extra")
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_wheels_workflow_builds_both_architectures_and_the_sdist() -> None:
    flow = _workflow()
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request", "workflow_dispatch"} <= set(triggers)
    wheels, sdist = flow["jobs"]["wheels"], flow["jobs"]["sdist"]
    assert wheels["strategy"]["matrix"]["arch"] == ["x86_64", "aarch64"]
    (cibw,) = [s for s in wheels["steps"] if s.get("uses", "").startswith("pypa/cibuildwheel@")]
    assert cibw["env"]["CIBW_ARCHS_LINUX"] == "${{ matrix.arch }}"
    (qemu,) = [s for s in wheels["steps"] if s.get("uses", "").startswith("docker/setup-qemu-action@")]
    assert qemu["if"] == "matrix.arch == 'aarch64'"
    runs = "\n".join(s.get("run", "") for s in sdist["steps"])
    assert "python -m build --sdist" in runs and "twine check" in runs
    (fallback,) = [s for s in sdist["steps"] if "CC" in s.get("env", {})]
    assert fallback["env"] == {"CC": "/bin/false", "LDSHARED": "/bin/false"}
    for job in (wheels, sdist):
        assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in job["steps"])


def test_the_wheels_test_imports_every_compiled_extension() -> None:
    settings = PYPROJECT["tool"]["cibuildwheel"]
    assert extension_modules() == ["sentret_core.models.bm25._saturated", "sentret_core.models.arrays._sorted"]
    for name in extension_modules():
        assert name in settings["test-command"]
    assert "compiled.available()" in settings["test-command"]  # built, and summing as numpy does
    assert settings["build"].split() == [f"cp{v.replace('.', '')}-*" for v in PYTHONS]  # the classifiers' Pythons


@pytest.mark.skipif(importlib.util.find_spec("cibuildwheel") is None,
                    reason="cibuildwheel is in the test extra from Python 3.11 (it needs 3.11)")
@pytest.mark.parametrize("archs", [None, "x86_64", "aarch64"])
def test_cibuildwheel_selects_cpython_manylinux_wheels(archs: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    if archs:
        env["CIBW_ARCHS_LINUX"] = archs  # as each job of the workflow sets it
    done = subprocess.run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", "--platform", "linux"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = [f"cp{v.replace('.', '')}-manylinux_{a}" for a in ([archs] if archs else ["x86_64", "aarch64"])
                for v in PYTHONS]
    assert done.stdout.split() == expected


# Run with only the wheel's files on the path before this environment's (numpy, spaCy…): which kernels it has,
# and the scores of a few queries, bit for bit (float.hex).
SCORE = """
import json, sys
import sentret_core
from sentret_core import Index, score, search
from sentret_core.models.arrays import vectors
from sentret_core.models.bm25 import compiled
index, queries, models = Index.load(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
scores = {f"{m}|{q}|{how}": [[int(i) for i in s.ids], [float(v).hex() for v in s.scores]]
          for m in models for q in queries
          for how, s in (("score", score(index, q, m)), ("search", search(index, q, m, 5)))}
print(json.dumps({"file": sentret_core.__file__, "kernel": compiled._kernel is not None,
                  "available": compiled.available(), "sorted": vectors.compiled() is not None, "scores": scores}))
"""
QUERIES = ["spanish civil war", "picasso peace prize", "lennon religion", "war"]
MODELS = ["bm25.v1", "bm25f.v1", "tfisf.v1", "lm-dir.v1"]


def scores_under(python_path: Path | None, index: Path, cwd: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)  # before site-packages and this checkout's editable install
    done = subprocess.run([sys.executable, "-c", SCORE, str(index), json.dumps(QUERIES), json.dumps(MODELS)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_the_sdist_installs_without_a_c_compiler_and_scores_as_the_kernels_do(
    built: tuple[Path, email.message.Message, email.message.Message], tmp_path: Path,
) -> None:
    sdist, _, _ = built
    env = dict(os.environ, CC="/bin/false", CXX="/bin/false", LDSHARED="/bin/false", PIP_NO_CACHE_DIR="1")
    wheel_dir, target = tmp_path / "wheel", tmp_path / "site"
    made = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                           "-w", str(wheel_dir), str(sdist)], env=env, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    for name in extension_modules():  # each one tried, with the compiler that cannot compile, and left out
        assert f'building extension "{name}" failed' in made.stdout + made.stderr
    (wheel,) = wheel_dir.glob("sentret-*.whl")
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target",
                                str(target), str(wheel)], env=env, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    package = target / "sentret_core"
    assert (package / "models" / "bm25" / "compiled.py").is_file() and (target / "bin" / "sentret").is_file()
    assert not list(package.rglob("*.so")) and not list(package.rglob("*.c"))

    index = build_from_texts(tmp_path, SMALL_DOCS).path
    elsewhere = tmp_path / "elsewhere"  # not the checkout: `python -c` puts the working directory on the path
    elsewhere.mkdir()
    fallback = scores_under(target, index, elsewhere)
    assert Path(fallback["file"]).resolve() == (package / "__init__.py").resolve()
    assert (fallback["kernel"], fallback["available"], fallback["sorted"]) == (False, False, False)
    reference = scores_under(None, index, elsewhere)  # this checkout, with the kernels where they are built
    assert Path(reference["file"]).resolve() == (ROOT / "sentret_core" / "__init__.py").resolve()
    if list((ROOT / "sentret_core").rglob("*.so")):  # built here (make test's install compiles them)
        assert (reference["kernel"], reference["available"], reference["sorted"]) == (True, True, True)
    assert fallback["scores"] == reference["scores"]
    assert all(ids for ids, _ in fallback["scores"].values())  # every query matched something
