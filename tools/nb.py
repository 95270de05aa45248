#!/usr/bin/env python3
"""Convert notebooks to and from a percent-format text file, for editing notebooks as plain text.

  python tools/nb.py py  nbs/00_core.ipynb  > /tmp/00_core.py    # notebook -> text
  python tools/nb.py nb  /tmp/00_core.py nbs/00_core.ipynb       # text -> notebook (outputs dropped)

Cells are separated by marker lines: `# %%` (code), `# %% [markdown]` (markdown, each line prefixed with `# `) and
`# %% [raw]`. A marker is the whole line, so a magic such as `%%ram`, or `# %%ram` in a markdown cell, is content.
Writing back over an existing notebook keeps the ids of cells whose text did not change, so diffs stay small.
"""
import json, re, sys, hashlib

MARKER = re.compile(r'# %%(?: \[(markdown|raw)\])?')

def _lines(c) -> list[str]:
    "The cell's lines as they stand in the text file."
    src = ''.join(c['source'])
    if c['cell_type'] == 'markdown': return [('# ' + l) if l else '#' for l in src.split('\n')]
    return src.split('\n')

def to_py(nb_path) -> str:
    "The notebook as percent-format text; refuses a cell line that would read back as a cell marker."
    nb, out = json.load(open(nb_path)), []
    for i, c in enumerate(nb['cells']):
        lines = _lines(c)
        if any(MARKER.fullmatch(l) for l in lines):
            raise ValueError(f'{nb_path}: cell {i} has a line that reads as a cell marker ({MARKER.pattern}); '
                             'the text format cannot hold it')
        kind = c['cell_type']
        out.append(('# %%' if kind == 'code' else f'# %% [{kind}]') + '\n' + '\n'.join(lines))
    return '\n\n'.join(out) + '\n'

def _cells(text) -> list[tuple[str, str]]:
    "`(cell_type, source)` pairs from percent-format text."
    cells, cur, kind = [], None, None
    for line in text.split('\n'):
        if m := MARKER.fullmatch(line):
            if cur is not None: cells.append((kind, cur))
            kind, cur = m.group(1) or 'code', []
        elif cur is not None: cur.append(line)
    if cur is not None: cells.append((kind, cur))
    res = []
    for kind, lines in cells:
        while lines and not lines[-1].strip(): lines.pop()
        if kind == 'markdown': lines = [l[2:] if l.startswith('# ') else l[1:] if l.startswith('#') else l for l in lines]
        res.append((kind, '\n'.join(lines)))
    return res

def _old_ids(nb_path) -> dict:
    "Ids of the cells already in `nb_path`, by (cell_type, source), in order."
    try: old = json.load(open(nb_path))['cells']
    except FileNotFoundError: return {}
    ids = {}
    for c in old: ids.setdefault((c['cell_type'], ''.join(c['source'])), []).append(c['id'])
    return ids

def to_nb(py_path, nb_path):
    "Write the cells of the text file `py_path` to the notebook `nb_path`."
    cells, old, used = [], _old_ids(nb_path), set()
    for i, (kind, src) in enumerate(_cells(open(py_path).read())):
        lines = src.split('\n')
        source = [l + '\n' for l in lines[:-1]] + [lines[-1]] if src else []
        kept = old.get((kind, src)) or []
        cid = kept.pop(0) if kept else hashlib.sha1(f'{nb_path}:{i}:{src[:80]}'.encode()).hexdigest()[:8]
        while cid in used: cid = hashlib.sha1(cid.encode()).hexdigest()[:8]
        used.add(cid)
        c = dict(cell_type=kind, id=cid, metadata={}, source=source)
        if kind == 'code': c.update(execution_count=None, outputs=[])
        cells.append(c)
    nb = dict(cells=cells, metadata=dict(kernelspec=dict(display_name='python3', language='python', name='python3')),
              nbformat=4, nbformat_minor=5)
    with open(nb_path, 'w') as f: json.dump(nb, f, indent=1, ensure_ascii=False); f.write('\n')

if __name__ == '__main__':
    cmd, *args = sys.argv[1:] or ['help']
    try:
        if cmd == 'py': sys.stdout.write(to_py(args[0]))
        elif cmd == 'nb': to_nb(*args)
        else: sys.exit(__doc__)
    except ValueError as e: sys.exit(f'nb.py: {e}')
