"""`pip install ramabana` as a user meets it: the wheel built from this tree, in a venv holding only its declared
dependencies, asks one question through `ramabana ask` (a real kernel of that venv, `%load_ext ramabana`, a `%%ram`
cell) against the llama-server double, offline.

`./dev setup` makes that venv (`.venv/fresh`, tools/freshvenv.py) from the package index, again only when the
dependencies in pyproject.toml change; here the wheel is built without build isolation and installed with `--no-deps
--no-index`, so nothing needs the network, and `pip check` proves the wheel's declared dependencies are installed: the
venv holds those and nothing else, so whatever the question needs and they lack fails here.
"""
import json, os, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/'tools'))
import freshvenv

FRESH = Path(sys.prefix)/'fresh'   # the project venv's own: .venv/fresh (RAMABANA_VENV/fresh)
OFFLINE = {'PIP_NO_INDEX': '1', 'PIP_DISABLE_PIP_VERSION_CHECK': '1'}

def build_wheel(out:Path) -> Path:
    "The wheel of this tree, built from a copy of its sources (nothing is written into the tree) without the network."
    src = out/'src'
    src.mkdir()
    for f in ('pyproject.toml', 'README.md', 'LICENSE'): shutil.copy(ROOT/f, src/f)
    for d in ('ramabana', 'jupyter-config'): shutil.copytree(ROOT/d, src/d, ignore=shutil.ignore_patterns('__pycache__'))
    r = subprocess.run([sys.executable, '-m', 'build', '--wheel', '--no-isolation', '-o', str(out/'dist'), str(src)],
                       capture_output=True, text=True, env={**os.environ, **OFFLINE}, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = list((out/'dist').glob('ramabana-*.whl'))
    assert len(wheels) == 1, wheels
    # the Jupyter server extension's config rides in the wheel as a data file (an editable install has none)
    import zipfile
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.endswith('.data/data/etc/jupyter/jupyter_server_config.d/ramabana.json') for n in names), names
    return wheels[0]

def clean_env(home:Path, **extra) -> dict:
    "An environment as a new user's shell has it: the fresh venv's bin first, a home of its own, nothing of this run's."
    return dict(PATH=f"{FRESH/'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin", HOME=str(home), LANG='C.UTF-8', **extra)

def test_wheel_in_fresh_venv(tmp_path):
    "Build the wheel, install it alone into the fresh venv, and ask one question that runs code in the kernel."
    if not freshvenv.current(FRESH):
        pytest.fail(f'{FRESH} is missing or was made for other dependencies than pyproject.toml declares: run ./dev setup')
    whl = build_wheel(tmp_path)
    pip = [str(FRESH/'bin'/'python'), '-m', 'pip']
    r = subprocess.run([*pip, 'install', '-q', '--no-deps', '--force-reinstall', str(whl)], capture_output=True, text=True,
                       env={**os.environ, **OFFLINE}, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([*pip, 'check'], capture_output=True, text=True, env={**os.environ, **OFFLINE}, timeout=120)
    assert r.returncode == 0, 'the wheel declares dependencies the fresh venv lacks:\n' + r.stdout + r.stderr

    from ramabana.llama_double import FakeLlamaServer, Reply, tool_call
    home, work = tmp_path/'home', tmp_path/'work'
    home.mkdir(); work.mkdir()   # the kernel starts in `work`: no ramabana/ of the source tree to import by accident
    nb = work/'sales.ipynb'
    nb.write_text(json.dumps(dict(nbformat=4, nbformat_minor=5, metadata={}, cells=[
        dict(cell_type='code', id='c1', metadata={}, source='units = [3, 5, 34]', outputs=[], execution_count=None)])))
    code = 'import sys, ramabana; print(sum(units), sys.prefix, ramabana.__file__)'
    with FakeLlamaServer(tools=True) as fake:
        # the default model is the double; no warm-up, so the script's first answer is the question's
        (home/'config.toml').write_text(f'[model]\ndefault = "fake"\n[model.fake]\nruntime = "llamacpp"\n'
                                        f'base_url = "{fake.url}/v1"\nctx = 8192\n[agent]\nwarm = false\n')
        fake.script(Reply(tool_calls=[tool_call('run_python', {'code': code})]), 'They sold 42 units.')
        r = subprocess.run([str(FRESH/'bin'/'ramabana'), 'ask', 'How many units were sold?', '--nb', str(nb), '--run',
                            '--approve', 'auto'], cwd=work, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env=clean_env(home, RAMABANA_CONFIG=str(home/'config.toml')), timeout=300)
        sent = fake.requests[-1].json['messages'] if fake.requests else []
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert 'They sold 42 units.' in r.stdout, r.stdout
    ran = [m['content'] for m in sent if m['role'] == 'tool']
    # the code ran (--approve auto) in a kernel of the fresh venv, on the wheel's ramabana and the notebook's variables
    site = FRESH/'lib'/f'python{sys.version_info[0]}.{sys.version_info[1]}'/'site-packages'/'ramabana'/'__init__.py'
    assert len(ran) == 1 and f'42 {FRESH} {site}' in ran[0], ran
