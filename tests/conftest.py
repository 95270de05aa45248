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


# A notebook runs once a suite: its test (tests/test_notebooks.py) is a run of tools/docs.py with the `slow` cells in,
# kept in the session's cache, and the docs site is made from those runs (a flagged cell shows its recording).
RUN = [sys.executable, 'tools/docs.py', '--flags', 'slow']

def run_notebooks(nbs:list, cache:Path) -> subprocess.CompletedProcess:
    "Run the notebooks `nbs` into `cache`, the ones cached there (a passing run of the same sources) not again."
    return subprocess.run([*RUN, '--cache', str(cache), '--run', *map(str, nbs)], cwd=ROOT, capture_output=True, text=True,
                          timeout=3600, env={**os.environ, 'PYTHONUNBUFFERED': '1'})

def build_docs(out:Path, cache:Path) -> Path:
    "The offline docs site in `out`, made from the runs in `cache`; a notebook not run there yet runs now (two at a time, a slow one alone)."
    r = subprocess.run([*RUN, '--out', str(out), '--cache', str(cache), '--jobs', '2'], cwd=ROOT, capture_output=True,
                       text=True, timeout=3600)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-20000:]
    return out

@pytest.fixture(scope='session')
def notebook_runs(tmp_path_factory) -> Path:
    "Where this session keeps each notebook's run: the test's, and the docs site's."
    return tmp_path_factory.mktemp('notebook-runs')

@pytest.fixture(scope='session')
def notebook_runner(): return run_notebooks

@pytest.fixture(scope='session')
def docs_builder(): return build_docs

@pytest.fixture(scope='session')
def docs_site(tmp_path_factory, notebook_runs) -> Path:
    "The offline docs site, built once per session from the notebooks' runs (every notebook, 8-12 min, unless already run)."
    return build_docs(tmp_path_factory.mktemp('docs'), notebook_runs)


# The llama-server double and a gateway in front of it, for the tests that drive a backend, an agent or the magic
# end to end: `fake` plays the model, `fspec` (8,192 tokens) and `small` (2,048) name it, `gw` serves both.
@pytest.fixture
def fake():
    from ramabana.llama_double import FakeLlamaServer
    with FakeLlamaServer(tools=True) as f: yield f

@pytest.fixture
def fspec(fake):
    from ramabana.core import ModelSpec
    return ModelSpec('fake', 'llamacpp', ctx=8192, base_url=fake.url + '/v1')

@pytest.fixture
def small(fake):
    from ramabana.core import ModelSpec
    return ModelSpec('fake-small', 'llamacpp', ctx=2048, base_url=fake.url + '/v1')

@pytest.fixture
def gw(tmp_path, fspec, small):
    "A gateway serving the double as `fake` (8,192 tokens) and `fake-small` (2,048), with its own ledger."
    from ramabana.app import start_gateway
    from ramabana.ledger import Ledger
    g = start_gateway(models={m.name: m for m in (fspec, small)}, ledger=Ledger(f'{tmp_path}/ledger.db'))
    yield g
    g.stop()
