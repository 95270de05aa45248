"""Run every notebook as one pytest item, so the suite closes with pytest's `N passed` line.

Each notebook runs in its own process with the `slow` flag on (CI runs everything), through tools/docs.py, which runs it
as nbdev-test does and keeps the run: the docs site of the same session is made from it, so no notebook runs twice.
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
def test_notebook(nb, notebook_runs, notebook_runner):
    "The notebook runs top to bottom and every assertion in it holds."
    from fastcore.nbio import read_nb
    r = notebook_runner([nb], notebook_runs)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-20000:]
    ran = Path(r.stdout.strip().splitlines()[-1])
    assert ran.parent == notebook_runs and ran.exists(), out
    cells = [c for c in read_nb(ran).cells if c.cell_type == 'code']
    assert any(c.get('execution_count') for c in cells) or not cells, f'no cell of {nb.name} ran:\n{out}'

def _markdown(text) -> list:
    "Block tokens of `text` as GitHub renders it (CommonMark with tables)."
    from markdown_it import MarkdownIt
    return MarkdownIt('commonmark').enable('table').parse(text)

def _index_markdown() -> list[str]:
    from fastcore.nbio import read_nb
    return [c.source for c in read_nb(ROOT/'nbs/index.ipynb').cells if c.cell_type == 'markdown']

def _outline(tokens) -> list[tuple]:
    "Headings and code blocks in order: ('h2', 'Using it'), ('sh', './dev demo'), ..."
    res = []
    for i, t in enumerate(tokens):
        if t.type == 'heading_open': res.append((t.tag, tokens[i + 1].content))
        elif t.type == 'fence': res.append((t.info, t.content.rstrip('\n')))
    return res

def test_readme_renders():
    "README.md renders as meant: the two commands are the only code before 'Using it', every fence closes, no code is empty."
    text = (ROOT/'README.md').read_text()
    outline = _outline(_markdown(text))
    heads = [x for x in outline if x[0] in ('h1', 'h2', 'h3')]
    assert heads == [('h1', 'ramabana'), ('h2', 'Using it'), ('h2', 'How it is built'), ('h2', 'Developing')], heads
    first = outline[1:outline.index(('h2', 'Using it'))]
    assert first == [('sh', './dev demo'), ('sh', './dev test')], first
    code = [x for x in outline if x not in heads]
    assert all(body.strip() for _, body in code), code
    assert ('python', '%%ram\nWhy does the last cell\'s plot have a gap in March?') in code, code
    assert any(info == 'toml' and '[model."qwen-local"]' in body for info, body in code), code
    assert text.count('\n```') % 2 == 0

def test_readme_follows_index():
    "nbs/index.ipynb (the docs front page) is README.md without its Developing section: each Markdown cell stands in it, and its code shows only outputs."
    readme, cells = (ROOT/'README.md').read_text(), _index_markdown()
    assert len(cells) >= 3 and all(c in readme for c in cells), [c[:60] for c in cells if c not in readme]
    assert _outline(_markdown('\n\n'.join(cells))) == _outline(_markdown(readme[:readme.index('## Developing')]))
    from fastcore.nbio import read_nb
    code = [c.source for c in read_nb(ROOT/'nbs/index.ipynb').cells if c.cell_type == 'code']
    # the front page shows no code: a cell is hidden, or shows only its output (a recorded run of the product)
    assert all(re.match(r'#\| (hide|echo: false)\n', c) for c in code), code
