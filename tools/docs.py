#!/usr/bin/env python3
"""Render nbs/*.ipynb to a browsable HTML site without Quarto or network: `./dev docs` (output in _docs/).

Cells marked `#| hide` are left out and `#|` directives are stripped, as nbdev's own docs do; every page gets a sidebar
linking all pages, and index.html is the front page (nbs/index.ipynb).
"""
import argparse, html, re
from pathlib import Path
import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parent.parent
_directive = re.compile(r'^\s*#\|.*\n?', re.M)

def _clean(nb):
    "Drop hidden cells and directive lines."
    cells = []
    for c in nb.cells:
        if c.cell_type == 'code' and re.search(r'^\s*#\|\s*(hide|default_exp)\b', c.source, re.M): continue
        c.source = _directive.sub('', c.source)
        if c.source.strip(): cells.append(c)
    nb.cells = cells
    return nb

def _title(nb, stem):
    for c in nb.cells:
        if c.cell_type == 'markdown' and (m := re.match(r'#\s+(.+)', c.source)): return m.group(1).strip()
    return stem

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title} - ramabana</title>
<style>body{{margin:0;font-family:system-ui,sans-serif;display:flex}} nav{{width:14rem;padding:1rem;border-right:1px solid #ddd;
min-height:100vh;background:#fafafa}} nav a{{display:block;padding:.2rem 0;color:#0645ad;text-decoration:none}}
nav a.here{{font-weight:bold}} main{{padding:1rem 2rem;max-width:60rem;overflow-x:auto}} pre{{background:#f6f8fa;padding:.5rem;overflow-x:auto}}
</style>{head}</head><body><nav><b>ramabana</b>{links}</nav><main>{body}</main></body></html>"""

def build(out:Path):
    out.mkdir(parents=True, exist_ok=True)
    nbs = sorted((ROOT/'nbs').glob('*.ipynb'), key=lambda p: (p.stem != 'index', p.stem))
    # no `In [ ]:` prompts (a docs page is not a running notebook), and the highlighting colours the basic template leaves out
    exp = HTMLExporter(template_name='basic', exclude_input_prompt=True, exclude_output_prompt=True)
    from pygments.formatters import HtmlFormatter
    head = f'<style>{HtmlFormatter(style="default").get_style_defs(".highlight")}</style>'
    pages = [(p, _clean(nbformat.read(p, as_version=4))) for p in nbs]
    titles = {p.stem: _title(nb, p.stem) for p, nb in pages}
    for p, nb in pages:
        body, _ = exp.from_notebook_node(nb)
        links = ''.join(f'<a href="{s}.html"{" class=here" if s == p.stem else ""}>{html.escape(t)}</a>' for s, t in titles.items())
        page = PAGE.format(title=html.escape(titles[p.stem]), head=head, links=links, body=body)
        (out/f'{p.stem}.html').write_text(page)
    print(f'{len(pages)} pages in {out}')

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--out', default=str(ROOT/'_docs'))
    build(Path(ap.parse_args().out))
