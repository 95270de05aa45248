#!/usr/bin/env python3
"""Convert notebooks to and from a percent-format text file, for editing notebooks as plain text.

  python tools/nb.py py  nbs/00_core.ipynb  > /tmp/00_core.py    # notebook -> text
  python tools/nb.py nb  /tmp/00_core.py nbs/00_core.ipynb       # text -> notebook (outputs dropped)

Cells are separated by lines `# %%` (code) and `# %% [markdown]` (markdown, each line prefixed with `# `).
"""
import json, sys, hashlib

def to_py(nb_path):
    nb = json.load(open(nb_path))
    out = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            out.append('# %% [markdown]\n' + '\n'.join(('# ' + l) if l else '#' for l in src.split('\n')))
        else: out.append('# %%\n' + src)
    return '\n\n'.join(out) + '\n'

def _cells(text):
    cells, cur, kind = [], None, None
    for line in text.split('\n'):
        if line.startswith('# %%'):
            if cur is not None: cells.append((kind, cur))
            kind, cur = ('markdown' if '[markdown]' in line else 'code'), []
        elif cur is not None: cur.append(line)
    if cur is not None: cells.append((kind, cur))
    res = []
    for kind, lines in cells:
        while lines and not lines[-1].strip(): lines.pop()
        if kind == 'markdown': lines = [l[2:] if l.startswith('# ') else l[1:] if l.startswith('#') else l for l in lines]
        res.append((kind, '\n'.join(lines)))
    return res

def to_nb(py_path, nb_path):
    cells = []
    for i, (kind, src) in enumerate(_cells(open(py_path).read())):
        lines = src.split('\n')
        source = [l + '\n' for l in lines[:-1]] + [lines[-1]] if src else []
        cid = hashlib.sha1(f'{nb_path}:{i}:{src[:80]}'.encode()).hexdigest()[:8]
        c = dict(cell_type=kind, id=cid, metadata={}, source=source)
        if kind == 'code': c.update(execution_count=None, outputs=[])
        cells.append(c)
    nb = dict(cells=cells, metadata=dict(kernelspec=dict(display_name='python3', language='python', name='python3')),
              nbformat=4, nbformat_minor=5)
    with open(nb_path, 'w') as f: json.dump(nb, f, indent=1, ensure_ascii=False); f.write('\n')

if __name__ == '__main__':
    cmd, *args = sys.argv[1:]
    if cmd == 'py': sys.stdout.write(to_py(args[0]))
    elif cmd == 'nb': to_nb(*args)
    else: sys.exit(__doc__)
