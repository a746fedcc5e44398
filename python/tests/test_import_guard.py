"""The package refuses, in one ImportError naming both versions, a torch other than the one its
_core was built against (loading _core there crashed the interpreter)."""
import os
import shutil
import subprocess
import sys

import torch

import recompdiag


def test_another_torch_is_refused_by_name(tmp_path):
    copy = tmp_path / "recompdiag"
    shutil.copytree(os.path.dirname(recompdiag.__file__), copy)
    (copy / "_build.py").write_text('TORCH_VERSION = "0.1.0"\n')
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", "import recompdiag"], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: recompdiag was built against torch 0.1.0")
    assert f"imports torch {torch.__version__}" in last


def test_the_torch_it_was_built_for_loads():
    from recompdiag import _build

    assert _build.TORCH_VERSION.split(".")[:2] == torch.__version__.split(".")[:2]
