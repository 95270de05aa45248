#!/usr/bin/env python3
"""Render nbs/*.ipynb to a browsable HTML site without Quarto or network: `./dev docs` (output in _docs/).

The pages are the ones nbdev's Quarto site makes, from the same steps: nbdev's own processors
(`nbdev.processors.FilterDefaults`, run by nbdev's own driver as `nbdev-proc-nbs` runs them) turn each notebook into a
page notebook, and nbconvert renders it where Quarto would. So each exported function and class gets its `show_doc`
entry (signature with its docments, docstring, a link to its source) and its `#| export` source is left out, `#| hide`
cells are left out, and Quarto's cell options (`#| echo: false`, `#| output: asis`, `#| code-fold`) are honoured.

Four processors of ours follow nbdev's (pyproject.toml's `doc_procs`, so `nbdev-docs` runs them too):
- `show_docs`: nbdev's `exec_show_docs` (skipped there) re-runs every cell that holds an import, in a fresh shell and out
  of order, which most of our cells do not survive; this runs only the `show_doc` cells, against the exported module.
- `run_outputs`: every example shows what it produced. The notebooks are committed without outputs; each is run as
  `nbdev-test` runs it (cells flagged `slow` or `notest` left out, or run with `--flags slow` as the suite runs them),
  its outputs kept in `_exec/` until a source changes. The suite's test of a notebook is that run (`--run`), so a
  notebook runs once per suite: its pages are made from the run that tested it.
  A flagged cell shows what it showed when it was recorded (`nbs/cassettes/outputs/NB.json`; `--record NB` records it).
- `doc_entries`: every name in the module's `__all__` gets an entry; nbdev's `show_doc` covers functions and classes,
  so a constant gets its defining statement, and nbdev's source links get their line numbers.
- `scrub_outputs`: what a run shows that only this machine and this moment would (paths, loopback ports, addresses,
  dates and times) is replaced by a placeholder, the same every time, so two builds give the same HTML.

  python tools/docs.py [--out _docs] [--jobs N] [--fresh]    # build the site (--fresh: run every notebook again)
  python tools/docs.py --run nbs/05a_errors.ipynb --flags slow # run notebooks into the cache, as the suite tests them
  python tools/docs.py --record nbs/06_llamacpp.ipynb          # run every cell, slow ones too; keep what flagged cells showed
  python tools/docs.py --record-front                          # `ramabana demo` on the default model, recorded for the front page
"""
import argparse, ast, contextlib, hashlib, html, json, os, re, subprocess, sys, tempfile, threading, time
from pathlib import Path
from nbdev.process import Processor

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))   # `tools.docs` for nbdev's doc_procs, this checkout's ramabana
NBS, CASSETTES = ROOT/'nbs', ROOT/'nbs'/'cassettes'/'outputs'
# where runs are kept; nbdev's workers find it in the environment (`--cache` sets it)
EXEC = Path(os.environ.get('RAMABANA_DOCS_CACHE') or ROOT/'_exec')
FRONT = ROOT/'nbs'/'cassettes'/'front_page.json'
# flags whose cells a run includes after all (`--flags`, as nbdev-test's): the suite runs its `slow` cells
RUN_FLAGS = os.environ.get('RAMABANA_DOCS_FLAGS', '').split()
EXECUTOR = 2   # bump when what an execution keeps changes: every cached run is then made again
CELL_TIMEOUT, NB_TIMEOUT = 600, 1800   # seconds, as nbdev-test's default cell timeout; a whole notebook

def notebooks() -> list[Path]:
    "The site's notebooks, the front page first."
    return sorted(NBS.glob('*.ipynb'), key=lambda p: (p.stem != 'index', p.stem))

def _flags() -> list[str]:
    "The test flags nbdev-test leaves out unless asked (pyproject's `tst_flags`)."
    from nbdev.config import get_config
    f = get_config().tst_flags
    return f.split() if isinstance(f, str) else list(f or [])

# ---- running a notebook, as nbdev-test does ----

def execute(src:Path, dst:Path, force_flags=()):
    "Run the notebook `src` as `nbdev-test` does (its folder, IN_TEST, flagged cells left out) and write it with outputs to `dst`."
    from execnb.shell import CaptureShell
    from fastcore.nbio import read_nb, write_nb
    from fastcore.xtras import working_directory
    from nbdev.test import nb_test_cells
    run = {c.id for c in nb_test_cells(src, skip_flags=_flags(), force_flags=list(force_flags))}
    os.environ['IN_TEST'] = '1'
    nb, sh = read_nb(src), CaptureShell(src)
    with working_directory(src.parent):
        # after a cell fails, every later cell is skipped: the run stops there, as nbdev-test's does
        sh.run_all(nb, preproc=lambda c: c.get('id') not in run or sh.exc is not None, cell_timeout=CELL_TIMEOUT)
    write_nb(nb, dst)   # a failed run too: `record` keeps what ran before the failure
    if sh.exc is not None: sys.exit(sh.prettytb(fname=src))

def _key(src:Path) -> str:
    "What a run of `src` depends on: the notebook, the package, the files it or the package names, the flags left out, this checkout."
    h = hashlib.sha256(f'{EXECUTOR} {ROOT} {sys.version} {_flags()} {RUN_FLAGS}'.encode())
    pkg = sorted((ROOT/'ramabana').glob('*.py'))
    said = src.read_text() + ''.join(p.read_text() for p in pkg)
    data = [p for p in sorted([*(NBS/'cassettes').rglob('*'), *(ROOT/'examples').rglob('*')])
            if p.is_file() and CASSETTES not in p.parents and p.name in said]
    for p in [src, *pkg, *data]: h.update(p.relative_to(ROOT).as_posix().encode() + b'\0' + p.read_bytes())
    return h.hexdigest()[:20]

@contextlib.contextmanager
def _alone_if_slow(src:Path):
    """Held around a run when `RUN_FLAGS` are on: alone (an exclusive lock) when the notebook has such cells, shared by the
    others. Its slow cells run the real model, several servers or timed loads: beside another run they crawl or flake."""
    if not RUN_FLAGS: yield; return
    import fcntl
    from fastcore.nbio import read_nb
    slow = any(set(RUN_FLAGS) & set(c.directives_) for c in _flagged(read_nb(src)))
    with open(EXEC/'.runs.lock', 'w') as f:
        fcntl.flock(f, fcntl.LOCK_EX if slow else fcntl.LOCK_SH)
        yield

def executed(src:Path, fresh:bool=False) -> Path:
    "`src` with its outputs: the cached run while nothing it depends on changed, else a new run in its own process."
    src = Path(src).resolve()
    dst = EXEC/f'{src.stem}.{_key(src)}.ipynb'
    if dst.exists() and not fresh: return dst
    EXEC.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(f'.{os.getpid()}.{threading.get_ident()}.tmp')
    try:
        with _alone_if_slow(src):
            start = time.monotonic()
            r = subprocess.run([sys.executable, __file__, '--execute', str(src), str(tmp), '--force', *RUN_FLAGS], cwd=ROOT,
                               timeout=NB_TIMEOUT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode: raise SystemExit(f'docs: {src.name} failed when run for its outputs:\n{r.stdout[-20000:]}')
        os.replace(tmp, dst)
        took = time.monotonic() - start
        dst.with_suffix('.json').write_text(json.dumps({'seconds': round(took, 1)}))   # what the run took: where the suite's time goes
        print(f'docs: ran {src.name} in {took:.0f} s', flush=True)
    finally: tmp.unlink(missing_ok=True)
    for old in [*EXEC.glob(f'{src.stem}.*.ipynb'), *EXEC.glob(f'{src.stem}.*.json')]:   # runs of older sources
        if old.with_suffix('.ipynb') != dst: old.unlink(missing_ok=True)
    return dst

def warm(paths:list[Path], jobs:int=1, fresh:bool=False):
    "Run the notebooks whose outputs are not cached, `jobs` at a time (each in its own process); every one runs, failed or not."
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max(1, jobs)) as ex: futs = [ex.submit(executed, p, fresh) for p in paths]
    failed = [str(e) for f in futs if (e := f.exception())]
    if failed: raise SystemExit('\n\n'.join(failed))

# ---- recorded outputs of the cells a docs run leaves out ----

def _sha(s:str) -> str: return hashlib.sha1(s.encode()).hexdigest()[:12]

def _flagged(nb) -> list:
    "The code cells carrying a flag nbdev-test leaves out (`slow`, `notest`)."
    from nbdev.process import NBProcessor
    flags = set(_flags())
    return [c for c in NBProcessor(nb=nb, rm_directives=False).nb.cells
            if c.cell_type == 'code' and flags & set(c.directives_)]

def cassette(stem:str) -> dict:
    "The recorded outputs of notebook `stem`'s flagged cells: cell id -> {'source': its hash then, 'outputs'}."
    p = CASSETTES/f'{stem}.json'
    return json.loads(p.read_text())['cells'] if p.exists() else {}

def record(src:Path):
    """Run every cell of `src` (the slow ones too, on the real model) and record what its flagged cells showed. When a cell
    fails, the flagged cells that ran before it are recorded and the others keep what they had recorded, if it is current."""
    from fastcore.nbio import read_nb
    src = Path(src).resolve()
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)/src.name
        r = subprocess.run([sys.executable, __file__, '--execute', str(src), str(out), '--force', *_flags()], cwd=ROOT)
        if not out.exists(): raise SystemExit(f'docs: {src.name} did not run; nothing recorded')
        nb = read_nb(out)
    sc, flagged = Scrub.for_site(), _flagged(nb)
    ran = [c for c in flagged if c.get('execution_count') is not None and not any(o.get('output_type') == 'error' for o in c.get('outputs', []))]
    old = {k: v for k, v in cassette(src.stem).items() if any(c.id == k and _sha(c.source) == v['source'] for c in flagged)}
    cells = {c.id: dict(source=_sha(c.source), outputs=outs) for c in ran if (outs := sc.outputs(c.get('outputs', [])))}
    cells = {**{k: v for k, v in old.items() if k not in {c.id for c in ran}}, **cells}
    if r.returncode: print(f'docs: {src.name} failed (above); recorded the {len(ran)} of its {len(flagged)} flagged cells that ran before it')
    p = CASSETTES/f'{src.stem}.json'
    if not cells:   # its flagged cells show nothing: nothing to keep
        p.unlink(missing_ok=True)
        return print(f'{p.relative_to(ROOT)}: none of its {len(flagged)} flagged cells shows anything; no recording')
    CASSETTES.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(dict(notebook=f'nbs/{src.name}', how=f'python tools/docs.py --record nbs/{src.name}', cells=cells),
                            indent=1, ensure_ascii=False, sort_keys=True) + '\n')
    print(f'{p.relative_to(ROOT)}: what {len(cells)} of its {len(flagged)} flagged cells showed')

FRONT_MODEL = 'qwen2.5-coder-1.5b'   # the default model, which a fresh `ramabana demo` runs
GREEDY = f'[model."{FRONT_MODEL}".sampling]\ntemperature = 0.0\ntop_k = 1\nmax_tokens = 300\n'

def record_front():
    "Run `ramabana demo` as a notebook would (its cells, then a `%%ram` cell) on the default model, then `ramabana calls`; keep both for the front page."
    import nbformat
    from nbclient import NotebookClient
    from ramabana.cli import DEMO_QUESTION, demo_notebook, prepare, ram_cell
    prepare(FRONT_MODEL)   # llama-server and the model's weights, built and fetched once
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        nb_path = d/'demo.ipynb'
        nb_path.write_bytes(demo_notebook().read_bytes())   # the notebook the agent reads, as `ramabana demo` attaches it
        (d/'config.toml').write_text(GREEDY)
        env = {'RAMABANA_CONFIG': str(d/'config.toml'), 'RAMABANA_DATA_DIR': str(d/'data'), 'RAMABANA_TASK_DIR': str(d/'tasks'),
               'JPY_SESSION_NAME': str(nb_path), 'RAMABANA_MODEL_DEFAULT': FRONT_MODEL, 'RAMABANA_AGENT_WARM': 'true'}
        os.environ.update(env)   # the kernel nbclient starts inherits them
        nb = nbformat.read(nb_path, as_version=4)
        ask = ram_cell(DEMO_QUESTION)
        nb.cells += [nbformat.v4.new_code_cell('%load_ext ramabana'), nbformat.v4.new_code_cell(ask)]
        NotebookClient(nb, timeout=600, kernel_name='python3', resources={'metadata': {'path': str(d)}}).execute()
        calls = subprocess.run([sys.executable, '-m', 'ramabana.cli', 'calls', '3'], capture_output=True, text=True,
                               env={**os.environ, **env}, timeout=120, check=True).stdout
    sc = Scrub.for_site()
    rec = dict(how='python tools/docs.py --record-front', model=FRONT_MODEL, sampling='greedy (temperature 0, top_k 1), max_tokens 300',
               ask=dict(source=ask, outputs=sc.outputs(nb.cells[-1].outputs)),
               calls=dict(command='ramabana calls 3', output=sc(calls)))
    FRONT.write_text(json.dumps(rec, indent=1, ensure_ascii=False, sort_keys=True) + '\n')
    print(f'{FRONT.relative_to(ROOT)}: {len(rec["ask"]["outputs"])} outputs of the %%ram cell, and the calls table')

# ---- scrubbing what only this machine and this moment would show ----

_re_ansi = re.compile(r'\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])')
_re_addr = re.compile(r'\b0x[0-9a-fA-F]{6,}\b')
_re_port = re.compile(r'\b(127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1\]):(\d{2,5})\b')
_re_datetime = re.compile(r'\b(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b')
_re_date = re.compile(r'\b\d{4}-\d{2}-\d{2}\b')
_re_time = re.compile(r'\b\d{2}:\d{2}:\d{2}(\.\d+)?\b')
_re_epoch = re.compile(r'\b1[6-9]\d{8}(\.\d+)?\b')
# ids a run draws at random (uuid4): a call's, an answer's, a tool call's, a hold's
_re_id = re.compile(r'\b((?:call|chatcmpl|hold|ref|resp|msg|toolu|req)[-_])[0-9a-f]{12,32}\b|\b[0-9a-f]{32}\b'
                    r'|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b')
# asyncio's warning for each write to a connection its peer closed: how many a run writes is timing, not the example
_re_noise = re.compile(r'^socket\.send\(\) raised exception\.\n?', re.M)

class Scrub:
    "Replace machine paths, loopback ports, addresses, dates, times and random ids in output text with placeholders; a value the sources write is kept."
    def __init__(self, sources:str, root=ROOT, home=None, tmp=None, prefixes=None, today=None):
        import datetime as dt, sysconfig
        self.src = sources
        home = str(home or Path.home())
        tmp = str(tmp or tempfile.gettempdir())
        pre = prefixes if prefixes is not None else [sysconfig.get_paths()['purelib'], sysconfig.get_paths()['stdlib'], sys.prefix, sys.base_prefix]
        # longest first: the checkout may sit in the home folder or the temp folder
        subs = {str(root): '…'}
        for p in pre: subs.setdefault(str(p), '…/' + Path(p).name if Path(p).name.startswith(('python', 'site-packages')) else '…')
        subs.setdefault(tmp, '/tmp')
        if home not in ('/', ''): subs.setdefault(home, '~')
        for k in list(subs):
            if (r := os.path.realpath(k)) != k: subs.setdefault(r, subs[k])
        # a path ends where a name cannot go on: /root/x is the home folder's, /rootfs is not
        self.paths = [(re.compile(re.escape(k) + r'(?![\w.-])'), v) for k, v in sorted(subs.items(), key=lambda kv: -len(kv[0]))]
        self.tmp_dir = re.compile(r'/tmp/(?!…)[^/\s\'"`<>)\]]+')
        today = today or dt.date.today()
        # a date the sources write is kept, unless it is about today: then it may as well be the run's
        self.now = {str(today + dt.timedelta(days=d)) for d in (-1, 0, 1)}

    @classmethod
    def for_site(cls) -> 'Scrub':
        "The scrubber for this checkout: the sources are every notebook's cells (they hold the package's code too)."
        return cls('\n'.join(''.join(c['source']) for p in notebooks() for c in json.loads(p.read_text())['cells']))

    def _kept(self, s:str) -> bool: return s in self.src and s[:10] not in self.now

    def __call__(self, s:str) -> str:
        s = _re_ansi.sub('', s)
        for k, v in self.paths: s = k.sub(lambda m: v, s)
        s = self.tmp_dir.sub('/tmp/…', s)
        s = _re_addr.sub('0x…', s)
        s = _re_port.sub(lambda m: m[0] if re.search(rf'\b{m[2]}\b', self.src) else f'{m[1]}:…', s)
        s = _re_datetime.sub(lambda m: m[0] if self._kept(m[0]) else
                             f'YYYY-MM-DD{m[4]}hh:mm' + (':ss' if m[7] else '') + ('.f' if m[8] else '') + ('Z' if m[9] == 'Z' else '+hh:mm' if m[9] else ''), s)
        s = _re_date.sub(lambda m: m[0] if self._kept(m[0]) else 'YYYY-MM-DD', s)
        s = _re_time.sub(lambda m: m[0] if self._kept(m[0]) else 'hh:mm:ss', s)
        s = _re_id.sub(lambda m: m[0] if m[0] in self.src else (m[1] or '') + '…', s)
        return _re_epoch.sub(lambda m: m[0] if self._kept(m[0]) else '…', s)

    def outputs(self, outs:list) -> list:
        "Each output scrubbed; a stream left empty goes."
        return [o for o in map(self.output, outs) if o.get('output_type') != 'stream' or o.get('text')]

    def output(self, o:dict) -> dict:
        "The output `o` (a notebook output dict) with all its text scrubbed."
        o = json.loads(json.dumps(o))
        def fix(v): return self(''.join(v)) if isinstance(v, list) else self(v) if isinstance(v, str) else v
        if 'text' in o: o['text'] = _re_noise.sub('', fix(o['text']))
        if 'traceback' in o: o['traceback'] = [fix(t) for t in o['traceback']]
        if 'evalue' in o: o['evalue'] = fix(o['evalue'])
        for k, v in (o.get('data') or {}).items():
            if k.startswith('text/') or k.endswith(('+json', '/json')) and isinstance(v, str): o['data'][k] = fix(v)
        if 'execution_count' in o: o['execution_count'] = None   # the count is the run's, not the example's
        return o

# ---- the processors nbdev runs after its own (pyproject.toml `doc_procs`) ----

def _code(src:str) -> str: return re.sub(r'^\s*#\|.*\n?', '', src, flags=re.M).strip()
def _is_showdoc(cell) -> bool: return cell.cell_type == 'code' and _code(cell.source).startswith('show_doc(')

class show_docs(Processor):
    """nbdev's `exec_show_docs` (skipped by pyproject's `skip_procs`) without re-running the notebook's cells: the
    `show_doc` cells nbdev's `add_show_docs` added run against the exported module, then get nbdev's `add_links`."""
    def begin(self):
        from execnb.shell import CaptureShell
        from fastcore.nbio import read_nb
        from nbdev.processors import insert_warning
        for c in self.nb.cells:   # nbdev makes its cells with random ids: name them, so two builds give the same page
            if _is_showdoc(c): c['id'] = 'sd-' + re.sub(r'\W+', '-', _code(c.source)[len('show_doc('):-1])
            elif c.cell_type == 'markdown' and c.source == insert_warning.content: c['id'] = 'autogenerated'
        if not hasattr(self.nb, 'path_') or not (mod := _module(read_nb(self.nb.path_))): return
        self.k = CaptureShell()
        # exec_show_docs runs every cell holding an import: most of ours run code after it that needs earlier cells
        self.k.run_cell(f'from nbdev.showdoc import show_doc\nimport {mod} as _m\n'
                        'globals().update({k: v for k, v in vars(_m).items() if not k.startswith("__")})')
        if self.k.exc: raise self.k.exc
        # add_show_docs inserts each name of an export cell right after the cell, so they come out last first: restore the cell's order
        import importlib
        line = _defs(Path(importlib.import_module(mod).__file__))
        cells, i = self.nb.cells, 0
        while i < len(cells):
            j = i
            while j < len(cells) and _is_showdoc(cells[j]): j += 1
            cells[i:j] = sorted(cells[i:j], key=lambda c: line.get(_code(c.source)[len('show_doc('):-1], 0))
            i = j + 1

    def __call__(self, cell):
        from nbdev.processors import add_links
        if not hasattr(self, 'k') or not _is_showdoc(cell): return
        self.k.cell(cell)
        if (e := self.k.exc): raise RuntimeError(f'{self.nb.path_}: {_code(cell.source)} failed: {type(e).__name__}: {e}') from e
        add_links(cell)

    def end(self):
        if hasattr(self, 'k'): self.k.close()

class run_outputs(Processor):
    "Each example's outputs from a run of its notebook; a flagged cell's from its recording (marked `recorded`)."
    def begin(self):
        from fastcore.nbio import read_nb
        path = Path(self.nb.path_).resolve()
        if path.parent != NBS.resolve(): return
        src = read_nb(path)
        flagged, srcs = {c.id for c in _flagged(src)}, {c.get('id'): c.source for c in src.cells}
        ran, rec = {c.get('id'): c for c in read_nb(executed(path)).cells}, cassette(path.stem)
        for c in self.nb.cells:
            if c.cell_type != 'code' or _is_showdoc(c) or not c.get('id'): continue
            if c.id in flagged:
                if (r := rec.get(c.id)) is None: continue
                # a recording of an older version of the cell would show what the cell no longer does: leave it out, say so
                if r['source'] != _sha(srcs[c.id]):
                    print(f'docs: {path.name} cell {c.id}: its recorded output is for an older version of the cell; '
                          f'`python tools/docs.py --record nbs/{path.name}` records it again', file=sys.stderr)
                    continue
                c.outputs = r['outputs']
                c.setdefault('metadata', {})['docs'] = 'recorded'
            elif c.id in ran: c.outputs = ran[c.id].get('outputs', [])

def _module(nb) -> str|None:
    "The module a notebook exports to (`#| default_exp`), as `ramabana.x`."
    from nbdev.config import get_config
    for c in nb.cells:
        if c.cell_type == 'code' and (m := re.search(r'^#\|\s*default_exp\s+(\S+)', c.source, re.M)):
            return f"{get_config().lib_path.name}.{m[1]}"

def _defs(py:Path) -> dict:
    "Line numbers of a module's top-level definitions: functions, classes, `@patch`ed methods as `Class.meth`, assigned names."
    res = {}
    for t in ast.parse(py.read_text()).body:
        if isinstance(t, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            patched = [d for d in t.decorator_list if 'patch' in ast.unparse(d)]
            if patched and t.args.args and (a := t.args.args[0].annotation) is not None:
                for cls in re.split(r'\s*\|\s*', ast.unparse(a).strip('()')): res.setdefault(f'{cls}.{t.name}', t.lineno)
            else: res.setdefault(t.name, t.lineno)
        elif isinstance(t, (ast.Assign, ast.AnnAssign)):
            for tg in (t.targets if isinstance(t, ast.Assign) else [t.target]):
                for n in ast.walk(tg):
                    if isinstance(n, ast.Name): res.setdefault(n.id, t.lineno)
    return res

def _entry(name:str, code:str, link:str) -> str:
    "A documentation entry in the shape `show_doc` gives one: rule, source link, heading, the code that defines it."
    return f'---\n\n[source]({link}){{target="_blank" style="float:right; font-size:smaller"}}\n\n### {name}\n\n```python\n{code}\n```'

_re_srclink = re.compile(r'\]\((\S+?/blob/\S+?/(\S+?\.py))#LNone\)')
_re_sdname = re.compile(r'^#{2,4} (\S+)\s*$', re.M)

def _reexported(obj, mod:str) -> str|None:
    "`show_doc`'s entry for a function or class another module of the package defines and `mod` gathers, else None."
    import importlib, inspect
    from nbdev.showdoc import show_doc
    home = getattr(obj, '__module__', None) or ''
    if home == mod or not home.startswith(mod.split('.')[0] + '.') or not (inspect.isclass(obj) or inspect.isfunction(obj)): return None
    md = show_doc(obj)._repr_markdown_()
    lineno = _defs(Path(importlib.import_module(home).__file__)).get(obj.__name__)
    return md.replace('#LNone', f'#L{lineno}' if lineno else '')   # the line in the module that defines it

class doc_entries(Processor):
    "An entry for every name in the module's `__all__` that `show_doc` left out (constants), and line numbers in source links."
    def begin(self):
        import importlib
        from fastcore.nbio import read_nb, mk_cell
        from nbdev.config import get_config
        if not hasattr(self.nb, 'path_') or not (mod := _module(read_nb(self.nb.path_))): return
        m = importlib.import_module(mod)
        py = Path(m.__file__)
        lines, cfg = _defs(py), get_config()
        gh = f'{cfg.git_url}/blob/{cfg.branch}/{cfg.lib_path.name}/{py.name}'
        shown = set()
        for c in self.nb.cells:
            for o in c.get('outputs', []):
                md = (o.get('data') or {}).get('text/markdown')
                if not md: continue
                md = ''.join(md) if isinstance(md, list) else md
                if _is_showdoc(c):
                    nm = (_re_sdname.findall(md) or [''])[0]
                    shown.add(nm)
                    # nbdev looks the line up under the qualified name and finds none (`#LNone`): look it up under the plain one
                    md = _re_srclink.sub(lambda x: f']({x[1]}#L{lines[nm]})' if nm in lines else f']({x[1]})', md)
                    o['data']['text/markdown'] = md
        src = {c.get('id'): c for c in read_nb(self.nb.path_).cells}
        order = list(src)
        missing = [n for n in getattr(m, '__all__', []) if n not in shown]
        for n in missing:
            code, at = self._defining(n, src)
            cell = mk_cell(f'#| echo: false\n#| output: asis\nshow_doc({n})')   # a show_doc entry, written here
            cell.has_sd, cell.metadata['docs'], cell['id'] = True, 'entry', f'sd-{n}'
            md = _reexported(getattr(m, n), mod) or _entry(n, code, f'{gh}#L{lines[n]}' if n in lines else gh)
            cell.outputs = [dict(output_type='display_data', metadata={}, data={'text/markdown': md})]
            self._insert(cell, at, order)

    def _defining(self, name, src) -> tuple[str, str|None]:
        "The statement of an export cell that binds `name` (its comments kept), and that cell's id."
        for cid, c in src.items():
            if c.cell_type != 'code' or not re.search(r'^#\|\s*exports?\b', c.source, re.M): continue
            try: tree = ast.parse(c.source)
            except SyntaxError: continue
            for t in tree.body:
                tg = t.targets if isinstance(t, ast.Assign) else [t.target] if isinstance(t, ast.AnnAssign) else []
                if any(isinstance(n, ast.Name) and n.id == name for x in tg for n in ast.walk(x)):
                    lines = c.source.splitlines()[t.lineno - 1:t.end_lineno]
                    if len(lines) > 12: lines = lines[:11] + ['    ...']   # `…` is no Python: Pygments would mark it an error
                    return '\n'.join(lines), cid
        return name, None

    def _insert(self, cell, at, order):
        "Put `cell` where the export cell `at` stood: before the first later cell still on the page (after its show_docs)."
        cells = self.nb.cells
        if at is None: cells.append(cell); return
        later = set(order[order.index(at) + 1:])
        i = next((i for i, c in enumerate(cells) if c.get('id') in later), len(cells))
        cells.insert(i, cell)

_SCRUB = []
def scrub_outputs(cell):
    "Scrub every output of the cell (`Scrub`): the runs', the recordings' and show_doc's alike."
    if not _SCRUB: _SCRUB.append(Scrub.for_site())
    if cell.get('outputs'): cell.outputs = _SCRUB[0].outputs(cell.outputs)

# ---- rendering a page notebook, where Quarto would ----

_re_opt = re.compile(r'^#\|\s*([\w-]+)\s*:\s*(.*?)\s*$')

def _options(cell) -> dict:
    "Quarto's cell options (`#| name: value` lines leading the cell), taken out of the source."
    opts, lines = {}, cell.source.split('\n')
    while lines and (m := _re_opt.match(lines[0])): opts[m[1]] = m[2].strip('"\''); lines.pop(0)
    cell.source = '\n'.join(lines)
    return opts

TEMPLATE = r"""{%- extends 'classic/base.html.j2' -%}
{% block input %}
{%- if cell.metadata.get('fold') %}<details class="code-fold"{{ ' open' if cell.metadata.fold == 'show' else '' }}><summary>{{ cell.metadata.get('fold_summary', 'Code') }}</summary>{% endif -%}
<div class="inner_cell"><div class="input_area">
{{ cell.source | highlight_code(metadata=cell.metadata) | clean_html }}
</div></div>
{%- if cell.metadata.get('fold') %}</details>{% endif -%}
{%- endblock input %}
"""

def _exporter():
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor
    exp = HTMLExporter(template_name='basic', template_file='docs.html.j2', extra_loaders=[DictLoader({'docs.html.j2': TEMPLATE})],
                       exclude_input_prompt=True, exclude_output_prompt=True, anchor_link_text='¶')
    exp.register_preprocessor(TagRemovePreprocessor(remove_cell_tags={'remove-cell'}, remove_input_tags={'remove-input'},
                                                    remove_all_outputs_tags={'remove-output'}), enabled=True)
    return exp

def _site_link(cfg):
    "The prefix nbdev's `add_links` gives a link into this site (`doc_host` + `doc_baseurl`), to be made relative."
    return (cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/')).rstrip('/') + '/'

def _fields(cls) -> str | None:
    "A NamedTuple's fields as a signature's lines (type, default, the comment beside each), or None for any other class."
    import inspect
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, '_fields')): return None
    notes = dict(re.findall(r'^\s+(\w+)\s*:[^#\n]*#\s*(.*)$', inspect.getsource(cls), re.M))
    ann, dflt = cls.__annotations__, cls._field_defaults
    def line(f):
        t = ann.get(f)
        t = getattr(t, '__forward_arg__', t)   # `from __future__ import annotations` leaves each type a ForwardRef
        t = t if isinstance(t, str) else getattr(t, '__name__', repr(t))
        d = f' = {dflt[f]!r}' if f in dflt else ''
        return f'    {f}: {t}{d}' + (f'  # {notes[f]}' if f in notes else '')
    return '\n'.join(map(line, cls._fields))

def _tuple_sig(m) -> str:
    "show_doc's heading and signature, with a NamedTuple's fields where fastcore shows `(*args, **kwargs)`."
    import importlib, pkgutil, ramabana
    for mod in pkgutil.iter_modules(ramabana.__path__):
        cls = getattr(importlib.import_module(f'ramabana.{mod.name}'), m[1], None)
        if (fields := _fields(cls)) is not None: return f'### {m[1]}\n\n```python\nclass {m[1]}(NamedTuple):\n{fields}'
    return m[0]

def description(path:Path) -> str|None:
    "A notebook's whole `>` description, its lines joined (nbdev's frontmatter keeps only the first line of it)."
    import json
    cells = json.loads(path.read_text())['cells']
    lines = ''.join(cells[0]['source']).splitlines() if cells and cells[0]['cell_type'] == 'markdown' else []
    quoted = [l[1:].strip() for l in lines if l.startswith('>')]
    return ' '.join(quoted) or None

def page(nb, cfg) -> tuple[dict, str]:
    "The frontmatter and the HTML body of a page notebook (one `nbdev-proc-nbs` made)."
    import nbformat, yaml
    fm = {}
    if nb.cells and nb.cells[0].cell_type == 'raw' and nb.cells[0].source.startswith('---'):
        fm = yaml.safe_load(nb.cells.pop(0).source.strip('-\n')) or {}
    pre = _site_link(cfg)
    keys = ('cell_type', 'id', 'metadata', 'source', 'outputs', 'execution_count', 'attachments')
    for i, c in enumerate(nb.cells):   # nbformat's keys only: fastcore and nbdev leave their own (`idx_`, `has_sd`)
        c = nb.cells[i] = nbformat.from_dict({k: v for k, v in c.items() if k in keys})
        c.metadata.pop('execution', None)   # when the run executed it
        if c.cell_type != 'code': continue
        o = _options(c)
        tags = set(c.metadata.get('tags', []))
        if o.get('include') == 'false': tags.add('remove-cell')
        if o.get('echo') == 'false' or not c.source.strip(): tags.add('remove-input')
        if o.get('output') == 'false': tags.add('remove-output')
        if o.get('code-fold') in ('true', 'show'): c.metadata.update(fold=o['code-fold'], fold_summary=o.get('code-summary', 'Code'))
        if o.get('output') == 'asis' and c.source.lstrip().startswith('show_doc('): tags.add('doc')
        if c.metadata.get('docs') == 'recorded': tags.add('recorded')
        c.metadata['tags'] = sorted(tags)
        for out in c.get('outputs', []):
            md = (out.get('data') or {}).get('text/markdown')
            if md is None: continue
            md = ''.join(md) if isinstance(md, list) else md
            # Quarto reads pandoc's `[text](url){attrs}`; nbconvert's Markdown does not: make it a plain link
            md = re.sub(r'\[source\]\((\S+?)\)\{[^}]*\}', r'<a class="source-link" href="\1">source</a>', md)
            md = re.sub(r'### (\w+)\n\n```python\ndef \1\(\n    \*args, \*\*kwargs\n\):', _tuple_sig, md)
            out['data']['text/markdown'] = md
    body, _ = _exporter().from_notebook_node(nbformat.from_dict(nb))
    body = body.replace(f'href="{pre}', 'href="') if pre != '/' else re.sub(r'href="/(?!/)', 'href="', body)
    # Quarto's heading ids are lowercase (nbdev's doc links point at them); nbconvert keeps the case
    body = re.sub(r'(<h[1-6] id=")([^"]+)"', lambda m: m[1] + m[2].lower() + '"', body)
    body = re.sub(r'(<a class="anchor-link" href="#)([^"]+)"', lambda m: m[1] + m[2].lower() + '"', body)
    return fm, body

CSS = """body{margin:0;font-family:system-ui,sans-serif;display:flex;line-height:1.45}
nav{width:14rem;flex:none;padding:1rem;border-right:1px solid #ddd;min-height:100vh;background:#fafafa}
nav a{display:block;padding:.2rem 0;color:#0645ad;text-decoration:none} nav a.here{font-weight:bold}
nav p.section{margin:.9rem 0 .2rem;font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:#666}
main{padding:1rem 2rem;max-width:62rem;min-width:0;overflow-x:auto} pre{background:#f6f8fa;padding:.5rem;overflow-x:auto}
header .description{font-size:1.15rem;color:#555;margin-top:-.5rem}
.output_area pre{background:#fff;border-left:3px solid #e1e4e8;padding-left:.6rem}
.celltag_doc .output_area{border:none} .celltag_doc hr{border:none;border-top:1px solid #ddd;margin:1.5rem 0 .5rem}
.celltag_doc h3,.celltag_doc h4{margin-top:.3rem} a.source-link{float:right;font-size:smaller}
.celltag_recorded .output::before{content:"recorded output";font-size:.75rem;color:#888}
.celltag_remove-input:not(.celltag_doc) .output_wrapper{border-left:3px solid #cfe3ff;padding-left:.8rem;margin:.5rem 0}
details.code-fold summary{cursor:pointer;color:#555;font-size:.9rem}
.anchor-link{visibility:hidden;margin-left:.3rem;text-decoration:none} :hover>.anchor-link{visibility:visible}
"""

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title} - {site}</title>
<style>{css}</style>{head}</head><body><nav><b>{site}</b>{links}</nav><main><header><h1>{title}</h1>{desc}</header>
{body}</main></body></html>"""

def _inline_md(text:str) -> str:
    "One line of Markdown as HTML without its paragraph, as Quarto shows a page's description."
    from nbconvert.filters.markdown import markdown2html
    return re.sub(r'^<p>|</p>\s*$', '', markdown2html(text).strip())

def sections(stems:list[str]) -> list[tuple[str, list[str]]]:
    "The sidebar's sections from `nbs/sidebar.yml`, as (title, page stems); a page it does not place is an error."
    import yaml
    tree = yaml.safe_load((NBS/'sidebar.yml').read_text())['website']['sidebar']['contents']
    out = [(e['section'], [Path(c).stem for c in e['contents']]) if isinstance(e, dict) else ('', [Path(e).stem]) for e in tree]
    placed = [s for _, ss in out for s in ss]
    if missing := sorted(set(stems) - set(placed)): raise SystemExit(f'docs: nbs/sidebar.yml places no page for {", ".join(missing)}')
    if gone := sorted(set(placed) - set(stems)): raise SystemExit(f'docs: nbs/sidebar.yml names pages that do not exist: {", ".join(gone)}')
    return out

def process(paths:list[Path], out:Path, jobs:int=1) -> list[Path]:
    "Page notebooks of `paths` in `out`, each made by nbdev's driver with nbdev's processors, as `nbdev-proc-nbs` makes them."
    import nbdev.serve_drv
    from fastcore.parallel import parallel
    from nbdev.processors import FilterDefaults
    dsts = [out/p.name for p in paths]
    parallel(nbdev.serve_drv.main, [(p, d, FilterDefaults) for p, d in zip(paths, dsts)], n_workers=jobs, pause=0.01,
             method='spawn')
    return dsts

def build(out:Path, jobs:int=1, fresh:bool=False) -> list[Path]:
    "The site in `out`: one page per notebook, the same sidebar on each, index.html the front page."
    from fastcore.nbio import read_nb
    from fastcore.xtras import working_directory
    from nbdev.config import get_config
    from pygments.formatters import HtmlFormatter
    cfg, paths = get_config(), notebooks()
    warm(paths, jobs, fresh)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d, working_directory(ROOT):
        pages = [(p, *page(read_nb(q), cfg)) for p, q in zip(paths, process(paths, Path(d), jobs))]
    head = f'<style>{HtmlFormatter(style="default").get_style_defs(".highlight")}</style>'
    names = {p.stem: fm.get('output-file') or f'{p.stem}.html' for p, fm, _ in pages}
    titles = {p.stem: fm.get('title') or p.stem for p, fm, _ in pages}
    written, groups = [], sections([p.stem for p, _, _ in pages])
    for p, fm, body in pages:
        link = lambda s: f'<a href="{names[s]}"{" class=here" if s == p.stem else ""}>{html.escape(titles[s])}</a>'
        links = ''.join((f'<p class="section">{html.escape(g)}</p>' if g else '') + ''.join(map(link, stems)) for g, stems in groups)
        d = description(p) or fm.get('description')
        desc = f'<p class="description">{_inline_md(d)}</p>' if d else ''
        doc = PAGE.format(title=html.escape(titles[p.stem]), site=html.escape(cfg.title), css=CSS, head=head, links=links,
                          desc=desc, body=body)
        (out/names[p.stem]).write_text(doc)
        written.append(out/names[p.stem])
    print(f'{len(pages)} pages in {out}')
    return written

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', default=str(ROOT/'_docs'), help='where the site goes (default _docs/)')
    ap.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 1), help='notebooks run at once (default 2)')
    ap.add_argument('--fresh', action='store_true', help='run every notebook again, cached or not')
    ap.add_argument('--cache', help='where the runs are kept (default _exec/)')
    ap.add_argument('--flags', nargs='*', help="run the cells flagged so too (nbdev-test's --flags); pages still show their recordings")
    ap.add_argument('--run', nargs='+', metavar='NB', help='run these notebooks into the cache (as the suite tests them); no site')
    ap.add_argument('--record', nargs='+', metavar='NB', help="record what these notebooks' flagged cells show")
    ap.add_argument('--record-front', action='store_true', help='record `ramabana demo` for the front page')
    ap.add_argument('--execute', nargs=2, metavar=('SRC', 'DST'), help=argparse.SUPPRESS)
    ap.add_argument('--force', nargs='*', default=[], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.cache: os.environ['RAMABANA_DOCS_CACHE'] = str(Path(a.cache).resolve()); EXEC = Path(os.environ['RAMABANA_DOCS_CACHE'])
    if a.flags is not None: os.environ['RAMABANA_DOCS_FLAGS'] = ' '.join(a.flags); RUN_FLAGS = a.flags
    if a.execute: execute(Path(a.execute[0]), Path(a.execute[1]), a.force)
    elif a.run:
        for nb in a.run: print(executed(Path(nb)))
    elif a.record:
        for nb in a.record: record(Path(nb))
    elif a.record_front: record_front()
    else: build(Path(a.out), a.jobs, a.fresh)
