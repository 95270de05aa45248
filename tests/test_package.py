"""The package as a user meets it: the console script, the docs site, a failing example failing the suite."""
import html, json, os, re, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def test_console_script():
    r = subprocess.run(['ramabana', '--help'], capture_output=True, text=True)
    assert r.returncode == 0 and 'config' in r.stdout, r.stderr

def test_failing_example_fails(tmp_path):
    "A notebook whose example cell fails makes nbdev-test exit non-zero, so the suite fails."
    nb = dict(cells=[dict(cell_type='code', id='a1', metadata={}, execution_count=None, outputs=[],
                          source='from fastcore.test import test_eq\ntest_eq(1, 2)')],
              metadata={}, nbformat=4, nbformat_minor=5)
    p = tmp_path/'bad.ipynb'
    p.write_text(json.dumps(nb))
    r = subprocess.run(['nbdev-test', str(p)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0

def test_docs_site(docs_site):
    "The offline docs build gives every notebook a page, under nbdev's name for it (00_core.ipynb: core.html), and an index linking them."
    from nbdev.config import nbpath2html
    tmp_path = docs_site
    index = (tmp_path/'index.html').read_text()
    for nb in (ROOT/'nbs').glob('*.ipynb'):
        name = nbpath2html(Path(nb.name)).name
        assert (tmp_path/name).exists(), name
        assert f'href="{name}"' in index
    # the front page is prose and recorded outputs: the %%ram example, the CLI table and the config sample, no code or directive
    text = html.unescape(re.sub(r'<[^>]+>', '', index))
    assert '%%ram\nWhy does the last cell' in text and '<table' in index and '[model."qwen-local"]' in text, text
    assert 'input_area' not in index and '#|' not in text
    # the sidebar is grouped by the architecture's parts, in nbs/sidebar.yml's order
    heads = re.findall(r'<p class="section">([^<]+)</p>', index)
    assert heads[:3] == ['The notebook side', 'The runtime', 'The gateway'] and 'The doubles' in heads, heads
    # a page's subtitle is its whole description, and a NamedTuple is shown with its fields, not (*args, **kwargs)
    failover = (tmp_path/'failover.html').read_text()
    sub = html.unescape(re.sub(r'<[^>]+>', '', re.search(r'<p class="description">(.*?)</p>', failover, re.S)[1]))
    assert sub.startswith('When an upstream fails') and sub.endswith('continued by the next model.'), sub
    assert 'class Retries(NamedTuple)' in html.unescape(re.sub(r'<[^>]+>', '', failover))
