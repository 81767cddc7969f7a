"""``import sentret_core`` costs milliseconds: every ``sentret`` command, ``--version`` and ``--help`` included,
imports the package first, so its names are imported on first use (PEP 562). Counted in modules imported,
not in seconds (timings are flaky on a shared machine)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "spacy", "streamlit", "sklearn", "lightgbm")


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_importing_the_package_imports_no_heavy_library() -> None:
    loaded = _run(f"import sys, sentret_core; print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    assert loaded == ""


def test_a_name_of_the_package_is_what_it_always_was() -> None:
    """The first name used registers ltr.v1 too; ``support`` is the function though a subpackage shares its
    name, whichever is imported first."""
    found = _run("import sentret_core.support.engine, sentret_core; from sentret_core import support, list_models; "
                 "print(callable(support), 'ltr.v1' in [s.name for s in list_models()], sentret_core.__version__)")
    callable_, registered, version = found.split()
    assert callable_ == "True" and registered == "True" and version


def test_an_unknown_name_is_an_attribute_error() -> None:
    assert _run("import sentret_core\ntry:\n    sentret_core.nothing\nexcept AttributeError as e:\n    print(e)") == (
        "module 'sentret_core' has no attribute 'nothing'")


def test_quick_commands_import_no_heavy_library() -> None:
    """``--version``, ``--help``, ``completion`` and an argument error build the whole parser and nothing
    more, numpy included (0.05-0.19 CPU-s alone, by machine): 0.22-0.29 CPU-s, where pandas, scipy and spaCy
    alone took 0.5-4 (README, Speed)."""
    for argv in (["--version"], ["--help"], ["completion", "bash"], ["completion", "zsh"], ["eval", "--nope"],
                 ["frobnicate"]):
        code = (f"import sys\nfrom sentret_core.cli.main import main\ntry:\n    main({argv!r})\n"
                "except SystemExit:\n    pass\n"
                f"sys.stdout = sys.__stdout__\n"
                f"print('LOADED', ','.join(m for m in {HEAVY!r} if m in sys.modules))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip().splitlines()[-1] == "LOADED", argv


def test_ctrl_c_while_the_command_line_is_imported_is_one_line_and_exit_130() -> None:
    code = ("import builtins\nplain = builtins.__import__\n"
            "def interrupted(name, *args, **kw):\n"
            "    if name == 'sentret_core.cli.main':\n        raise KeyboardInterrupt\n"
            "    return plain(name, *args, **kw)\n"
            "builtins.__import__ = interrupted\n"
            "from sentret_core.cli.entry import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stderr, done.stdout) == (130, "sentret: interrupted\n", "")
