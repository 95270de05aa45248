"""The developer tools: tools/nb.py's text round trip and tools/testclock.py's moved clock."""
import json, os, subprocess, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/'tools'))
import nb as nbtext, testclock

def _nb(*cells) -> dict:
    "A notebook of `(cell_type, source)` cells."
    def cell(i, kind, src):
        c = dict(cell_type=kind, id=f'c{i}', metadata={}, source=src)
        if kind == 'code': c.update(execution_count=None, outputs=[])
        return c
    return dict(cells=[cell(i, *c) for i, c in enumerate(cells)], metadata={}, nbformat=4, nbformat_minor=5)

def _round_trip(nb_path:Path, tmp:Path) -> list[tuple]:
    "The cells of `nb_path` after notebook -> text -> notebook."
    txt, out = tmp/'x.py', tmp/'x.ipynb'
    txt.write_text(nbtext.to_py(nb_path))
    nbtext.to_nb(txt, out)
    return [(c['cell_type'], ''.join(c['source'])) for c in json.loads(out.read_text())['cells']]

def test_round_trip_keeps_magics(tmp_path):
    "`%%ram` in a code cell and in a Markdown fence, and a `# %%ram` comment, are content, not cell markers."
    cells = [('markdown', '## Using it\n\n```python\n%%ram\nWhy does the plot have a gap?\n```\n\nMore prose.'),
             ('code', '%%ram\nWhat is in df?'),
             ('code', '# %%ram is a cell magic\nx = 1'),
             ('markdown', '# %% not a marker either')]
    p = tmp_path/'m.ipynb'; p.write_text(json.dumps(_nb(*cells)))
    assert _round_trip(p, tmp_path) == cells

def test_marker_line_refused(tmp_path):
    "A line that would read back as a marker is refused by name, not silently split into another cell."
    p = tmp_path/'m.ipynb'; p.write_text(json.dumps(_nb(('code', 'x = 1\n# %%\ny = 2'))))
    with pytest.raises(ValueError, match='cell 0 has a line that reads as a cell marker'): nbtext.to_py(p)
    p.write_text(json.dumps(_nb(('raw', 'raw text'), ('code', 'y = 2'))))
    assert _round_trip(p, tmp_path) == [('raw', 'raw text'), ('code', 'y = 2')]

@pytest.mark.parametrize('nb', sorted((ROOT/'nbs').glob('*.ipynb')), ids=lambda p: p.stem)
def test_round_trip_every_notebook(nb, tmp_path):
    "Every notebook of the project survives the text round trip cell for cell."
    want = [(c['cell_type'], ''.join(c['source'])) for c in json.loads(nb.read_text())['cells']]
    assert _round_trip(nb, tmp_path) == want

def test_round_trip_keeps_ids(tmp_path):
    "Writing text back over a notebook keeps the ids of the cells it did not change."
    p = tmp_path/'m.ipynb'; p.write_text(json.dumps(_nb(('code', 'a = 1'), ('code', 'b = 2'))))
    txt = tmp_path/'m.py'; txt.write_text(nbtext.to_py(p).replace('a = 1', 'a = 1\n\n# %%\nnew = 0'))
    nbtext.to_nb(txt, p)
    ids = [c['id'] for c in json.loads(p.read_text())['cells']]
    assert ids[0] == 'c0' and ids[2] == 'c1' and ids[1] not in ('c0', 'c1'), ids

def test_clock_offsets():
    assert (testclock.offset_seconds('+365d'), testclock.offset_seconds('-1d'), testclock.offset_seconds('+1.5h')) == (365*86400, -86400, 5400)
    for bad in ('365d', '+365', '+1y', ''):
        with pytest.raises(ValueError, match='an offset is a sign, a number and a unit'): testclock.offset_seconds(bad)

def _real_time() -> float:
    "The wall clock as a native program reads it: time-machine moves only Python's."
    return float(subprocess.run(['date', '+%s.%N'], capture_output=True, text=True, check=True).stdout)

def _python_time(spec:str) -> float:
    "`time.time()` in a new Python process of this venv whose clock is moved by `spec`."
    env = {**os.environ, 'RAMABANA_TEST_CLOCK': spec}
    r = subprocess.run([sys.executable, '-c', 'import time; print(time.time())'], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return float(r.stdout)

def test_clock_moves_new_python_processes():
    "With the start-up hook installed (inert without the variable), each new Python process reads its moved clock."
    testclock.install()
    for spec in ('+365d', '-1d'):
        assert abs(_python_time(spec) - _real_time() - testclock.offset_seconds(spec)) < 30, spec

def test_clock_moves_kernels():
    "A Jupyter kernel started by jupyter_client, as the magic's tests and `ramabana ask` start one, is moved too."
    from jupyter_client.manager import start_new_kernel
    testclock.install()
    km, kc = start_new_kernel(kernel_name='python3', env={**os.environ, 'RAMABANA_TEST_CLOCK': '+365d'})
    try:
        reply = kc.execute_interactive('import time; t = time.time()', user_expressions={'t': 't'}, timeout=60)
        t = float(reply['content']['user_expressions']['t']['data']['text/plain'])
    finally: kc.stop_channels(); km.shutdown_kernel(now=True)
    assert abs(t - _real_time() - 365*86400) < 60, t

def test_this_run_clock():
    "This run's own clock: moved by `./dev test --clock OFFSET`, real otherwise."
    spec = os.environ.get('RAMABANA_TEST_CLOCK')
    assert abs(time.time() - _real_time() - (testclock.offset_seconds(spec) if spec else 0)) < 30, spec

def test_bad_clock_stops_python():
    "A malformed offset stops each Python process with one line, rather than letting it run on the real clock."
    testclock.install()
    r = subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True, text=True, timeout=60,
                       env={**os.environ, 'RAMABANA_TEST_CLOCK': 'next year'})
    assert r.returncode == 2 and r.stdout == '' and "RAMABANA_TEST_CLOCK='next year'" in r.stderr, r
