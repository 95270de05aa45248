"""The developer tools: tools/nb.py's text round trip, tools/testclock.py's moved clock and tools/docs.py's site."""
import json, os, subprocess, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/'tools'))
import nb as nbtext, testclock, docs

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

# ---- tools/docs.py: the offline docs site ----

def test_scrub_placeholders(tmp_path):
    "What only one machine or one moment would show becomes a placeholder; what the sources write stays."
    import datetime as dt
    sc = docs.Scrub('port 8788, checked 2026-11-29, the row at 15:47:54', root='/work/repo', home='/home/ann', tmp='/tmp',
                    prefixes=['/opt/venv/lib/python3.11/site-packages', '/opt/py/lib/python3.11'], today=dt.date(2030, 5, 1))
    cases = [('/work/repo/nbs/x.ipynb and /work/repository', '…/nbs/x.ipynb and /work/repository'),
             ('File "/opt/venv/lib/python3.11/site-packages/httpx/_client.py"', 'File "…/site-packages/httpx/_client.py"'),
             ('/opt/py/lib/python3.11/asyncio/locks.py', '…/python3.11/asyncio/locks.py'),
             ('/home/ann/.cache/ramabana and /home/annie', '~/.cache/ramabana and /home/annie'),
             ("log /tmp/tmp3i5o5ulv/x.crashed.log, '/tmp/pytest-of-ann'", "log /tmp/…/x.crashed.log, '/tmp/…'"),
             ('<Agent at 0x7f3a2b1c9d00>', '<Agent at 0x…>'),
             ('http://127.0.0.1:41234/v1 and http://127.0.0.1:8788/v1', 'http://127.0.0.1:…/v1 and http://127.0.0.1:8788/v1'),
             ('at 2030-05-01T12:03:04.5+00:00, checked 2026-11-29', 'at YYYY-MM-DDThh:mm:ss.f+hh:mm, checked 2026-11-29'),
             ('2030-04-30 and 12:03:04, not 15:47:54', 'YYYY-MM-DD and hh:mm:ss, not 15:47:54'),
             ("'created': 1796147044", "'created': …"),
             ('call call-2607886f900b46dfa116a370 failed, key 0123456789abcdef0123456789abcdef', 'call call-… failed, key …'),
             ('\x1b[31mred\x1b[0m', 'red')]
    for raw, want in cases: assert sc(raw) == want, (raw, sc(raw), want)
    noisy = {'output_type': 'stream', 'name': 'stderr', 'text': 'socket.send() raised exception.\n' * 7}
    assert sc.outputs([noisy, {'output_type': 'stream', 'name': 'stdout', 'text': ['a ', '/tmp/tmpx\n']}]) == \
        [{'output_type': 'stream', 'name': 'stdout', 'text': 'a /tmp/…\n'}]   # asyncio's count of failed writes is timing
    today = docs.Scrub('2030-05-01 is in the sources', today=dt.date(2030, 5, 1))
    assert today('run on 2030-05-01') == 'run on YYYY-MM-DD'   # a date of the run's own day is scrubbed, sources or not

def test_docs_build_is_repeatable(docs_site, notebook_runs, docs_builder, tmp_path):
    "Pages rendered a second time from the suite's one run of each notebook are the same HTML: nothing but the run decides a page."
    import difflib
    runs = {p.name: p.stat().st_mtime_ns for p in notebook_runs.iterdir()}
    built = docs_builder(tmp_path/'site', notebook_runs)
    assert {p.name: p.stat().st_mtime_ns for p in notebook_runs.iterdir()} == runs   # rendered again, not run again
    a, b = ({p.name: p.read_text() for p in d.glob('*.html')} for d in (docs_site, built))
    assert a.keys() == b.keys() and len(a) > 1, (sorted(a), sorted(b))
    differ = [n for n in sorted(a) if a[n] != b[n]]
    diff = '' if not differ else '\n'.join(list(difflib.unified_diff(a[differ[0]].splitlines(), b[differ[0]].splitlines(), lineterm=''))[:40])
    assert not differ, f'{differ} differ between two renders of the same runs; the first:\n{diff}'

def test_recordings_are_current():
    "Each recorded output (nbs/cassettes/outputs/) belongs to a flagged cell as it reads now: a changed cell is recorded again."
    from fastcore.nbio import read_nb
    stale = []
    for p in sorted(docs.CASSETTES.glob('*.json')):
        nb = ROOT/'nbs'/f'{p.stem}.ipynb'
        assert nb.exists(), f'{p.name} records a notebook that is gone'
        flagged = {c.id: c.source for c in docs._flagged(read_nb(nb))}
        for cid, r in json.loads(p.read_text())['cells'].items():
            if docs._sha(flagged.get(cid, '')) != r['source']: stale.append(f'{nb.name} cell {cid}')
    assert not stale, f'recorded for another version of the cell: {stale}; `python tools/docs.py --record nbs/NB.ipynb` records it again'
    front = json.loads(docs.FRONT.read_text())
    assert front['ask']['source'].startswith('%%ram\n') and front['calls']['output'], front
