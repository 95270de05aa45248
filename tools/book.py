#!/usr/bin/env python3
"""How the notebooks read as a book: the measures issue 54 names, per notebook and in all.

  python tools/book.py            # the table and the totals
  python tools/book.py --worst 10 # the notebooks furthest from the goals first

- definitions with an example: of the exported cells that define a function or class, the share followed within two
  cells by an unexported code cell (an example) before the next exported one
- @patch: the share of exported cells that are `@patch` methods
- long prose: markdown cells over 300 words
- module lines: lines of each module in ramabana/ (the generated `_modidx.py` aside)
- settings read: the modules of ramabana/ that read a setting, by calling core's `get`, `setting`, `load_config` or
  `engine_config`, or `resolve` or `catalog` without handing them the config, or by reading a `RAMABANA_*` variable of
  `os.environ` (core, which defines them, and the generated `_modidx.py` aside; the test doubles too, which are no
  product module)
"""
import ast, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEF = re.compile(r'^(?:@patch[^\n]*\n)?(?:async\s+)?(?:def|class)\s+\w+', re.M)

def cells(nb):
    for c in json.loads(nb.read_text())['cells']:
        src = ''.join(c['source'])
        yield c['cell_type'], src

def exported(src): return bool(re.match(r'\s*#\|\s*export', src))

def measure(nb):
    cs = list(cells(nb))
    defs = with_ex = patches = exp = long_md = 0
    for i, (kind, src) in enumerate(cs):
        if kind == 'markdown':
            if len(src.split()) > 300: long_md += 1
            continue
        if not exported(src): continue
        exp += 1
        if re.search(r'^@patch', src, re.M): patches += 1
        if not DEF.search(src): continue
        defs += 1
        nxt = [(k, s) for k, s in cs[i + 1:i + 3]]
        for k, s in nxt:
            if k == 'code' and exported(s): break
            if k == 'code' and s.strip() and not s.lstrip().startswith('#| hide'): with_ex += 1; break
    return dict(defs=defs, with_ex=with_ex, patches=patches, exported=exp, long_md=long_md)

READERS = {'get', 'setting', 'resolve', 'catalog', 'load_config', 'engine_config'}   # core's functions that read the settings
DOUBLES = {'testing', 'llama_double', 'cassettes', 'fault_server', 'hosted_doubles', 'hosted_base', 'openai_double',
           'anthropic_double', 'gemini_double', 'ollama_double'}

CONFIG_AT = {'catalog': 0, 'resolve': 1}   # where these take a `Config`: handed one, they read nothing themselves

def given_config(call, name) -> bool:
    "Whether `call` of core's `name` is handed the config it works from (so it reads no setting itself)."
    at = CONFIG_AT.get(name)
    return at is not None and (len(call.args) > at or any(k.arg == 'cfg' for k in call.keywords))

def reads_settings(path) -> bool:
    "Whether the module at `path` calls one of core's `READERS` or reads a `RAMABANA_*` environment variable."
    tree = ast.parse(path.read_text())
    from_core = {a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                 and n.module in ('core', 'ramabana.core') for a in n.names if a.name in READERS}
    consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
              for t in n.targets if isinstance(t, ast.Name)}
    environ = lambda e: any(isinstance(x, ast.Attribute) and x.attr == 'environ' for x in ast.walk(e))   # os.environ, not a mapping passed in
    def ramabana_var(k):
        v = k.value if isinstance(k, ast.Constant) else consts.get(k.id) if isinstance(k, ast.Name) else None
        return isinstance(v, str) and v.startswith('RAMABANA_')
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in from_core and not given_config(n, from_core[n.func.id]): return True
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args and ramabana_var(n.args[0])
            and (n.func.attr == 'getenv' or n.func.attr == 'get' and environ(n.func.value))): return True
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and ramabana_var(n.slice) and environ(n.value): return True
    return False

def settings_readers() -> list:
    "The modules of ramabana/ that read settings (`reads_settings`), core, the index and the doubles aside."
    return [p.stem for p in sorted((ROOT/'ramabana').glob('*.py'))
            if p.stem not in {'core', '_modidx', '__init__'} | DOUBLES and reads_settings(p)]

def main():
    worst = int(sys.argv[sys.argv.index('--worst') + 1]) if '--worst' in sys.argv else None
    rows = {nb.stem: measure(nb) for nb in sorted((ROOT/'nbs').glob('*.ipynb'))}
    tot = {k: sum(r[k] for r in rows.values()) for k in next(iter(rows.values()))}
    order = sorted(rows, key=lambda n: (rows[n]['with_ex'] / rows[n]['defs'] if rows[n]['defs'] else 1)) if worst else sorted(rows)
    print(f"{'notebook':22} {'defs':>5} {'with ex':>8} {'@patch':>7} {'exported':>9} {'md>300':>7}")
    for n in order[:worst] if worst else order:
        r = rows[n]
        print(f"{n:22} {r['defs']:5} {r['with_ex'] / r['defs'] if r['defs'] else 1:8.0%} {r['patches']:7} {r['exported']:9} {r['long_md']:7}")
    print(f"\nall: definitions with an example within two cells {tot['with_ex']}/{tot['defs']} = {tot['with_ex'] / tot['defs']:.0%} (goal 60%); "
          f"@patch {tot['patches']}/{tot['exported']} = {tot['patches'] / tot['exported']:.0%} of exported cells (goal 10%); "
          f"markdown cells over 300 words: {tot['long_md']} (goal 0)")
    big = [(p.name, n) for p in sorted((ROOT/'ramabana').glob('*.py')) if p.name != '_modidx.py'
           and (n := len(p.read_text().splitlines())) > 700]
    print('modules over 700 lines:', ', '.join(f'{a} {b}' for a, b in big) or 'none')
    readers = settings_readers()
    print(f"settings read in {len(readers)} modules: {', '.join(readers)} (goal: at most 4, with core 5)")

if __name__ == '__main__': main()
