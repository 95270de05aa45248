import os, subprocess, sys
import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Tools installed beside this Python (nbdev-test, jupyter) must be found by the subprocesses tests start.
os.environ['PATH'] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get('PATH', '')


@pytest.fixture(scope='session')
def docs_site(tmp_path_factory) -> Path:
    "The offline docs site, built once per run (about 40 s) for the tests that read it."
    out = tmp_path_factory.mktemp('docs')
    r = subprocess.run([sys.executable, 'tools/docs.py', '--out', str(out)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return out
