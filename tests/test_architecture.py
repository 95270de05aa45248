"""The arrows between modules point one way, and no module reaches into another's private names.

The layers are the import-linter contract in pyproject.toml (`lint-imports`): a module imports only the layers below
its own, lazily or not, and no product module imports the test doubles. The private-name check is this file's own:
import-linter sees modules, not names.
"""
import ast, re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT/'ramabana'
MODULES = sorted(p for p in LIB.glob('*.py') if p.name not in ('__init__.py', '_modidx.py'))

def test_layers():
    "import-linter keeps every contract in pyproject.toml."
    r = subprocess.run([str(Path(sys.executable).parent/'lint-imports')], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert 'Contracts: 2 kept, 0 broken' in r.stdout, r.stdout[-3000:]

def private_reaches(path:Path) -> list[str]:
    "Where the module at `path` uses a `_name` of another ramabana module: imported by name, or as `module._name`."
    tree, me, found = ast.parse(path.read_text()), path.stem, []
    aliases = {}   # local name -> the ramabana module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ''
            ours = node.level > 0 or mod == 'ramabana' or mod.startswith('ramabana.')
            if not ours: continue
            target = mod.split('.')[-1] if mod not in ('', 'ramabana') else None
            for a in node.names:
                if target is None: aliases[a.asname or a.name] = a.name   # `from . import testing`
                elif a.name.startswith('_') and not a.name.startswith('__') and target != me:
                    found.append(f'{path.name}:{node.lineno} imports {target}.{a.name}')
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith('ramabana.'): aliases[a.asname or a.name.split('.')[-1]] = a.name.split('.')[-1]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith('_') and not node.attr.startswith('__') and aliases[node.value.id] != me):
            found.append(f'{path.name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}')
    return found

def test_no_private_names_across_modules():
    "No module imports or reads another module's private (`_name`) names."
    found = [f for p in MODULES for f in private_reaches(p)]
    assert not found, found

def test_each_module_says_what_it_owns():
    "Each module starts with a docstring of what it owns (nbdev writes the notebook's summary there)."
    missing = [p.name for p in MODULES if not (ast.get_docstring(ast.parse(p.read_text())) or '').strip()]
    assert not missing, missing

def readme_layers() -> list[set]:
    "The modules of each row of the README's layer table, top row first."
    text = (ROOT/'README.md').read_text()
    rows = re.findall(r'^\| (\d+) \| (.+?) \|', text, re.M)
    return [set(re.findall(r'`(\w+)`', mods)) for _, mods in rows]

def test_readme_table_is_the_contract():
    "The README's layer table names the layers of the import-linter contract, in its order."
    try: import tomllib
    except ImportError: import tomli as tomllib   # Python 3.10
    contracts = tomllib.loads((ROOT/'pyproject.toml').read_text())['tool']['importlinter']['contracts']
    conf = contracts[0]
    layers = [{m.strip().removeprefix('ramabana.') for m in row.split('|')} for row in conf['layers']]
    assert readme_layers() == layers, (readme_layers(), layers)
    doubles = {m.removeprefix('ramabana.') for m in contracts[1]['forbidden_modules']}   # for tests: outside the layers
    assert set().union(*layers) | doubles == {p.stem for p in MODULES}
