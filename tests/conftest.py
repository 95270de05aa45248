import os, subprocess, sys
import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Tools installed beside this Python (nbdev-test, jupyter) must be found by the subprocesses tests start.
os.environ['PATH'] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get('PATH', '')
# The real-model tests run on the small model (98 MB, 8x faster): the default, qwen2.5-coder-1.5b, is a 1 GiB download
# and would make the suite several times slower. Its own checks are in bench/agent_tasks.py. A setting from the
# environment reaches every notebook, kernel and command the suite starts.
os.environ.setdefault('RAMABANA_MODEL_DEFAULT', 'smollm2')
# `%load_ext ramabana` warms a local model on a thread (a server started, a call in the ledger): the suite's kernels
# load the extension for many other reasons, so it is off here and 09_magic turns it on where it tests it.
os.environ.setdefault('RAMABANA_AGENT_WARM', 'false')


def build_docs(out:Path, cache:Path) -> Path:
    "The offline docs site in `out`, its notebooks run afresh into `cache` (`./dev docs` keeps its runs in _exec/)."
    r = subprocess.run([sys.executable, 'tools/docs.py', '--out', str(out), '--cache', str(cache)], cwd=ROOT, capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-20000:]
    return out

@pytest.fixture(scope='session')
def docs_builder(): return build_docs

@pytest.fixture(scope='session')
def docs_site(tmp_path_factory) -> Path:
    "The offline docs site, built once per run with every notebook run for its outputs (2-4 min) for the tests that read it."
    return build_docs(tmp_path_factory.mktemp('docs'), tmp_path_factory.mktemp('docs-runs'))
