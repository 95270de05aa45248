"""Run every notebook as one pytest item, so the suite closes with pytest's `N passed` line.

Each notebook runs in its own `nbdev-test` process with the `slow` flag on: CI runs everything.
"""
import hashlib, os, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
NBS = sorted(p for p in (ROOT/'nbs').glob('*.ipynb') if not p.name.startswith('_'))
LIB = ROOT/'ramabana'

def _hashes(): return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(LIB.glob('*.py'))}

def test_export_is_in_step():
    "Running `nbdev-export` changes nothing in ramabana/: the modules match the notebooks."
    before = _hashes()
    r = subprocess.run(['nbdev-export'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    changed = sorted(k for k in before.keys() | _hashes().keys() if before.get(k) != _hashes().get(k))
    assert not changed, f'nbdev-export changed {changed}: export the notebooks and commit the modules'

def test_notebooks_found():
    "There are notebooks to run: a wrong path must not pass silently."
    assert len(NBS) > 1, NBS

@pytest.mark.parametrize('nb', NBS, ids=[p.stem for p in NBS])
def test_notebook(nb):
    "The notebook runs top to bottom and every assertion in it holds."
    env = {**os.environ, 'PYTHONUNBUFFERED': '1'}
    r = subprocess.run(['nbdev-test', str(nb), '--flags', 'slow', '--do-print'], cwd=ROOT, capture_output=True,
                       text=True, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-20000:]
    assert 'Success' in out, f'nbdev-test ran nothing for {nb.name}:\n{out}'

def _commands(text):
    "The shell commands in ```sh blocks."
    return re.findall(r'```sh\n(.*?)\n```', text, re.S)

def test_readme_commands():
    "README.md and nbs/index.ipynb give the same two commands."
    readme = _commands((ROOT/'README.md').read_text())
    from fastcore.nbio import read_nb
    index = _commands('\n'.join(c.source for c in read_nb(ROOT/'nbs/index.ipynb').cells if c.cell_type == 'markdown'))
    assert len(readme) == 2, readme
    assert readme == index, (readme, index)
