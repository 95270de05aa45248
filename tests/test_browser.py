"""What a person sees, in a real browser: JupyterLab running `%%ram` cells, and the rendered docs site.

Debian's Chromium and ChromeDriver (`./dev test` installs them when missing) drive JupyterLab started on a loopback
port with a token, on a throwaway notebook. A question goes to the embedded SmolLM2 (greedy, so what it says is not
asserted); the approval prompt comes from a FakeLlamaServer model whose script asks to run code. Screenshots go to a
temporary folder whose path is printed.
"""
import contextlib, json, os, re, secrets, shutil, socket, subprocess, sys, tempfile, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, DRIVER = shutil.which('chromium') or '/usr/bin/chromium', shutil.which('chromedriver') or '/usr/bin/chromedriver'
if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
    pytest.skip(f'no Chromium here ({CHROMIUM}, {DRIVER}): ./dev test installs Debian chromium and chromium-driver; '
                'this machine could not', allow_module_level=True)
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait
from ramabana.llama_double import FakeLlamaServer, Reply, tool_call

SHOTS = Path(tempfile.mkdtemp(prefix='ramabana-browser-'))

def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def shot(driver, name:str) -> Path:
    "Save a screenshot and say where it is."
    p = SHOTS/f'{name}.png'
    driver.save_screenshot(str(p))
    print(f'screenshot: {p}')
    return p

@pytest.fixture(scope='module', autouse=True)
def say_where_the_screenshots_are(request):
    "After the browser tests, one line with the folder of their screenshots (pytest hides a passing test's prints)."
    yield
    shots = sorted(p.name for p in SHOTS.glob('*.png'))
    tr, cap = (request.config.pluginmanager.get_plugin(n) for n in ('terminalreporter', 'capturemanager'))
    if tr and cap and shots:
        with cap.global_and_fixture_disabled(): tr.write_line(f'\nbrowser screenshots in {SHOTS}: {", ".join(shots)}')

@pytest.fixture(scope='module')
def browser(tmp_path_factory):
    "Headless Chromium on an empty profile, kept off the network it cannot reach."
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
              '--disable-background-networking', '--disable-component-update', '--disable-sync',
              '--window-size=1400,1000', f'--user-data-dir={tmp_path_factory.mktemp("chromium")}'):
        opts.add_argument(a)
    os.environ.setdefault('SE_OFFLINE', 'true')   # Selenium Manager must not look for a driver online
    d = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=DRIVER))
    d.set_script_timeout(30)
    # a headless window never has the focus, and JupyterLab tracks its current notebook by focus: without this, Chromium
    # 150 leaves `shell.currentWidget` null, and commands that act on the current notebook do nothing
    d.execute_cdp_cmd('Emulation.setFocusEmulationEnabled', {'enabled': True})
    yield d
    d.quit()

def wait_http(url:str, timeout:float=90, proc=None, log:Path|None=None):
    "Wait until `url` answers 200; fail with the server's log when it does not."
    import httpx
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None: break
        try:
            if httpx.get(url, timeout=2).status_code == 200: return
        except httpx.HTTPError: pass   # not listening yet
        time.sleep(0.25)
    tail = log.read_text(errors='replace')[-3000:] if log and log.exists() else ''
    raise AssertionError(f'{url} did not answer within {timeout} s\n{tail}')

CELLS = [   # (id, source) of the throwaway notebook
    ('load', '%load_ext ramabana'),
    ('prices', "prices = {'tea': 3, 'cake': 5}\nsum(prices.values())"),
    ('ask', '%%ram\nWhat does the cell above compute? Explain it step by step.'),
    ('mark', '%ram discard prices'),
    ('approve', '%%ram -m fake --no-notebook\nset total to 2 + 3'),
    ('total', 'total'),
    # a deliberately broken display: the answer as text/plain only, which the Markdown check must catch
    ('break', "import ramabana.magic as rm\nrm.CellView._md = lambda self, text: {'text/plain': text}"),
    ('broken', '%%ram -m fake --no-notebook\nand once more?'),
]
FAKE_ANSWER = 'Done: **total** is 5, and the <cell> tag shows as written.'

@contextlib.contextmanager
def serve_lab(root:Path, cells:list, config):
    "JupyterLab on a loopback port with a token, in `root` holding ask.ipynb of `cells`; its kernels read `config(fake)`, the"
    " config file naming a FakeLlamaServer started for it."
    nb = dict(cells=[dict(id=i, cell_type='code', execution_count=None, metadata={}, outputs=[], source=s) for i, s in cells],
              metadata=dict(kernelspec=dict(name='python3', display_name='Python 3', language='python')), nbformat=4, nbformat_minor=5)
    (root/'ask.ipynb').write_text(json.dumps(nb, indent=1))
    port, token = free_port(), secrets.token_hex(16)
    settings = root/'.settings'/'@jupyterlab'/'apputils-extension'
    settings.mkdir(parents=True)
    (settings/'notification.jupyterlab-settings').write_text('{"fetchNews": "false", "checkForUpdates": false}')
    with FakeLlamaServer(tools=True) as fake:
        cfg = root/'.config.toml'
        cfg.write_text(config(fake))
        env = {**os.environ, 'RAMABANA_CONFIG': str(cfg), 'RAMABANA_DATA_DIR': str(root/'.data'), 'RAMABANA_TASK_DIR': str(root/'.tasks'),
               'JUPYTER_CONFIG_DIR': str(root/'.jupyter'), 'JUPYTER_RUNTIME_DIR': str(root/'.runtime'),
               'JUPYTERLAB_SETTINGS_DIR': str(root/'.settings'), 'JUPYTERLAB_WORKSPACES_DIR': str(root/'.workspaces')}
        env.pop('JPY_SESSION_NAME', None)
        log = root/'.lab.log'
        proc = subprocess.Popen([sys.executable, '-m', 'jupyterlab', '--no-browser', '--allow-root', '--ServerApp.ip=127.0.0.1',
                                 f'--ServerApp.port={port}', '--ServerApp.port_retries=0', f'--IdentityProvider.token={token}',
                                 f'--ServerApp.root_dir={root}', '--LabApp.expose_app_in_browser=True'],
                                env=env, cwd=root, stdout=log.open('wb'), stderr=subprocess.STDOUT)
        try:
            url = f'http://127.0.0.1:{port}'
            wait_http(f'{url}/api/status?token={token}', proc=proc, log=log)
            yield dict(url=url, token=token, root=root, fake=fake, log=log)
        finally:
            proc.terminate()
            try: proc.wait(30)
            except subprocess.TimeoutExpired: proc.kill(); proc.wait(10)

FAKE_TABLE = '[model.fake]\nruntime = "llamacpp"\nbase_url = "{url}/v1"\nctx = 8192\n'

@pytest.fixture
def lab(tmp_path_factory):
    "JupyterLab on the throwaway notebook; its kernels see a greedy smollm2 and `fake`."
    from ramabana.llamaserver import setup
    setup(progress=False)   # builds llama-server first on a new machine
    smollm2 = '[model]\ndefault = "smollm2"\n\n[model.smollm2.sampling]\ntemperature = 0.0\ntop_k = 1\nmax_tokens = 200\n\n'
    with serve_lab(tmp_path_factory.mktemp('lab'), CELLS, lambda fake: smollm2 + FAKE_TABLE.format(url=fake.url)) as lab: yield lab

WATCH = """
window.__ram = {progress: 0, answers: []};
new MutationObserver(ms => {
  for (const m of ms) for (const n of m.addedNodes)
    if (n.nodeType === 1 && (n.tagName === 'PROGRESS' || n.querySelector('progress'))) __ram.progress += 1;
  const out = [...document.querySelectorAll('.jp-Cell[data-ram="ask"] .jp-OutputArea-output')]
    .map(e => e.innerText.trim()).filter(t => t && !t.startsWith('…') && !/ · smollm2$/.test(t));
  const t = out[0];
  if (t && __ram.answers.at(-1) !== t) __ram.answers.push(t);
}).observe(document.body, {childList: true, subtree: true, characterData: true});
"""

def js(d, code:str, *args):
    return d.execute_script(code, *args)

def wait_for(d, cond, timeout:float, what:str):
    "Wait until `cond(d)` is truthy; on timeout, a screenshot and a failure naming `what`."
    try: return WebDriverWait(d, timeout, poll_frequency=0.2).until(lambda d: cond(d))
    except TimeoutException as e:   # say what we waited for, keep the picture
        p = shot(d, 'timeout-' + re.sub(r'\W+', '-', what)[:40])
        raise AssertionError(f'{what}: not seen within {timeout} s (screenshot {p})') from e

def outputs(d, cell:str) -> list[dict]:
    "The outputs of cell `cell` as the page shows them: the renderer's class, the visible text, the HTML."
    return js(d, """return [...document.querySelectorAll(`.jp-Cell[data-ram="${arguments[0]}"] .jp-OutputArea-output`)]
                   .map(e => ({cls: e.className, text: e.innerText.trim(), html: e.innerHTML}))""", cell)

def markdown_answer(outs:list[dict], answer:str) -> dict:
    "The output showing `answer` (a Markdown source) rendered: bold as <strong>, a tag in the text as the text."
    shown = [o for o in outs if 'is 5, and the' in o['text']]
    assert shown, f'no output shows the answer: {outs}'
    o = shown[-1]
    assert 'jp-RenderedMarkdown' in o['cls'] and '<strong>total</strong>' in o['html'], f'the answer is not rendered Markdown: {o}'
    assert '**' not in o['text'] and 'the <cell> tag shows' in o['text'], f'the answer shows raw Markdown or lost its tag: {o}'
    return o

def test_lab_runs_the_magic(browser, lab):
    "JupyterLab shows a streamed Markdown answer, the progress bar, the status line, an approval prompt, and keeps a mark at save."
    d, fake = browser, lab['fake']
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'total = 2 + 3'})]), FAKE_ANSWER, FAKE_ANSWER)
    d.get(f"{lab['url']}/lab/tree/ask.ipynb?token={lab['token']}")
    wait_for(d, lambda d: js(d, "const w = window.jupyterapp?.shell.currentWidget;"
                              "return w?.sessionContext?.session?.kernel?.status === 'idle'"), 120, 'the kernel to start')
    # tag each cell's DOM node with its id, so what is checked names cells, not positions
    js(d, "jupyterapp.shell.currentWidget.content.widgets.forEach(c => c.node.dataset.ram = c.model.id);" + WATCH)
    js(d, "jupyterapp.commands.execute('notebook:run-all-cells')")

    # the approval prompt for running code, answered as a person would: type y, press Enter
    stdin = wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, '.jp-Cell[data-ram="approve"] .jp-Stdin-input'),
                     600, 'the approval prompt')[0]
    prompt = d.find_element(By.CSS_SELECTOR, '.jp-Cell[data-ram="approve"] .jp-Stdin-prompt').text
    assert 'Allow run_python' in prompt and 'total = 2 + 3' in prompt, prompt
    shot(d, 'lab-approval-prompt')
    stdin.send_keys('y', Keys.ENTER)
    wait_for(d, lambda d: (o := outputs(d, 'total')) and o[-1]['text'] == '5', 120, 'the approved code to have run')
    wait_for(d, lambda d: any('· fake' in o['text'] for o in outputs(d, 'broken')), 120, 'the last cell to finish')
    shot(d, 'lab-answered')

    # the embedded model's answer streamed in as Markdown, after a progress bar, and a status line ended it
    seen, ask = js(d, 'return window.__ram'), outputs(d, 'ask')
    assert seen['progress'] > 0, 'no progress bar was shown while the prompt was read'
    assert len(seen['answers']) >= 2 and seen['answers'][-1], f'the answer did not stream in: {seen["answers"]}'
    answer = [o for o in ask if o['text'] == seen['answers'][-1]]
    assert answer and 'jp-RenderedMarkdown' in answer[0]['cls'], f'the answer is not rendered Markdown: {ask}'
    status = [o for o in ask if '<sub>' in o['html']]
    assert len(status) == 1 and re.fullmatch(r'in [\d,]+( \([\d,]+ cached\))? · out [\d,]+ · 1 turn · \d+% of 8,192 · smollm2', status[0]['text']), ask

    # the fake's answer: Markdown rendered, the tool line, a status line naming the model
    approve = outputs(d, 'approve')
    markdown_answer(approve, FAKE_ANSWER)
    assert any(o['text'].startswith("⚙ run_python(code='total = 2 + 3')") for o in approve), approve
    assert any(re.fullmatch(r'in [\d,]+ .*· 2 turns · \d+% of 8,192 · fake', o['text']) for o in approve), approve
    # and a display sent as text/plain only fails that check
    with pytest.raises(AssertionError, match='not rendered Markdown'): markdown_answer(outputs(d, 'broken'), FAKE_ANSWER)

    # `%ram discard` under JupyterLab waits for the save; Ctrl+S saves without a "File Changed" dialog, with the mark
    assert outputs(d, 'mark')[0]['text'] == 'cell prices: discard (written into the notebook when it is next saved)', outputs(d, 'mark')
    d.find_element(By.CSS_SELECTOR, '.jp-Cell[data-ram="total"] .jp-InputPrompt').click()
    webdriver.ActionChains(d).key_down(Keys.CONTROL).send_keys('s').key_up(Keys.CONTROL).perform()
    nbfile = lab['root']/'ask.ipynb'
    def saved_mark(d):
        if js(d, "return document.querySelector('.jp-Dialog')?.innerText"): return 'dialog'
        try: cells = {c['id']: c for c in json.loads(nbfile.read_text())['cells']}
        except ValueError: return False   # Jupyter writes the file in place (after a backup copy): caught mid-write
        return (cells['prices']['metadata'].get('ramabana') or {}).get('compact') == 'discard' and cells['total'].get('outputs')
    got = wait_for(d, saved_mark, 30, 'the saved notebook to carry the mark')
    shot(d, 'lab-saved')
    assert got != 'dialog', js(d, "return document.querySelector('.jp-Dialog').innerText")
    assert 'written into' in lab['log'].read_text(), 'the server extension did not write the mark'

RECORD_CELLS = [   # (id, source) of the notebook the agent's code lands in
    ('load', '%load_ext ramabana'),
    ('approve', '%ram approve auto'),
    ('data', 'north = [120, 135, None, 150]'),
    ('ask', '%%ram -m fake --no-notebook\nadd a list filled: north with its gaps as 0'),
    ('after', 'filled'),
]
LANDED = 'filled = [x or 0 for x in north]'

@pytest.fixture
def record_lab(tmp_path_factory):
    "JupyterLab on RECORD_CELLS, whose kernels know only `fake` (no llama-server is needed)."
    with serve_lab(tmp_path_factory.mktemp('record'), RECORD_CELLS, lambda fake: FAKE_TABLE.format(url=fake.url)) as lab: yield lab

CELLS_NOW = """return jupyterapp.shell.currentWidget.content.model.sharedModel.cells.map(c => c.toJSON())
                 .map(c => ({id: c.id, source: c.source, metadata: c.metadata, execution_count: c.execution_count}))"""

def test_agent_code_lands_as_a_cell(browser, record_lab):
    "An action turn's code lands as a new cell right after the %%ram cell, marked by its first line; at save the server"
    " extension writes the mark into the cell's metadata (`ramabana.agent`: the turn and the %%ram cell)."
    d, lab, fake = browser, record_lab, record_lab['fake']
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': LANDED})]),
                Reply(tool_calls=[tool_call('run_python', {'code': 'filled'})]),   # a look: it does not land
                'Done: `filled` is north with 0 for the gap.')
    d.get(f"{lab['url']}/lab/tree/ask.ipynb?token={lab['token']}")
    wait_for(d, lambda d: js(d, "const w = window.jupyterapp?.shell.currentWidget;"
                              "return w?.sessionContext?.session?.kernel?.status === 'idle'"), 120, 'the kernel to start')
    js(d, "jupyterapp.shell.currentWidget.content.widgets.forEach(c => c.node.dataset.ram = c.model.id)")
    js(d, "jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_for(d, lambda d: any('· fake' in o['text'] for o in outputs(d, 'ask')), 120, 'the %%ram cell to finish')
    wait_for(d, lambda d: (o := outputs(d, 'after')) and o[-1]['text'] == '[120, 135, 0, 150]', 60, 'the cell after it to run')
    cells = wait_for(d, lambda d: (c := js(d, CELLS_NOW)) and len(c) == len(RECORD_CELLS) + 1 and c, 30, 'the landed cell')
    shot(d, 'lab-landed-cell')
    ids = [c['id'] for c in cells]
    i = ids.index('ask')
    new = cells[i + 1]
    assert ids[i + 2] == 'after' and new['id'] not in dict(RECORD_CELLS), ids   # right after the %%ram cell, a cell of its own
    first, code = new['source'].split('\n', 1)
    assert re.fullmatch(r'# ramabana: the agent ran this for the %%ram cell above \(turn chat-[\w-]+\.1\)', first), first
    assert code == LANDED, code   # the look that followed did not land
    assert new['execution_count'] is None, new   # it ran in the %%ram cell; run-all did not run it again

    # saved (as Ctrl+S does), the file carries the mark in the cell's metadata
    js(d, "jupyterapp.commands.execute('docmanager:save')")
    nbfile = lab['root']/'ask.ipynb'
    def saved(d):
        try: cs = json.loads(nbfile.read_text())['cells']
        except ValueError: return False   # Jupyter writes the file in place (after a backup copy): caught mid-write
        return len(cs) == len(RECORD_CELLS) + 1 and cs
    saved_cells = wait_for(d, saved, 30, 'the saved notebook to hold the landed cell')
    got = saved_cells[i + 1]
    assert got['id'] == new['id'] and ''.join(got['source']) == new['source'], got
    turn = first.split('(turn ')[1].rstrip(')')
    assert got['metadata']['ramabana'] == {'agent': {'turn': turn, 'for': 'ask'}}, got['metadata']
    assert 'agent cell(s) marked' in lab['log'].read_text(), 'the server extension did not mark the cell'

    # the %%ram cell run again (Shift+Enter) and the agent doing the same work: the saved notebook has that cell after it,
    # so no second copy lands; the execution count is set as the reply is handled, with its payload, so it is waited for
    before = {c['id']: c['execution_count'] for c in cells}['ask']
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': LANDED})]), 'Done again.')
    js(d, "const nb = jupyterapp.shell.currentWidget.content; nb.activeCellIndex = arguments[0];"
          "jupyterapp.commands.execute('notebook:run-cell-and-select-next')", i)
    wait_for(d, lambda d: {c['id']: c['execution_count'] for c in js(d, CELLS_NOW)}['ask'] not in (None, before), 60, 'the second run')
    again = js(d, CELLS_NOW)
    assert [c['id'] for c in again] == ids and any('Done again.' in o['text'] for o in outputs(d, 'ask')), again
    shot(d, 'lab-ran-again')

@pytest.fixture(scope='module')
def docs(docs_site):
    "The offline docs site (`./dev docs`), served on a loopback port."
    import functools, http.server, threading
    quiet = type('Quiet', (http.server.SimpleHTTPRequestHandler,), {'log_message': lambda *a: None})
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(quiet, directory=str(docs_site)))
    th = threading.Thread(target=srv.serve_forever, daemon=True); th.start()
    yield f'http://127.0.0.1:{srv.server_address[1]}'
    srv.shutdown(); srv.server_close(); th.join(10)

PAGE_CHECK = """
const main = document.querySelector('main');
const prose = main.cloneNode(true);
prose.querySelectorAll('pre, code, .highlight, .output_wrapper').forEach(e => e.remove());
const cells = [...main.querySelectorAll('.code_cell')];
const examples = cells.filter(c => !c.classList.contains('celltag_doc') && c.querySelector('.input_area'));
return {title: document.title, h1: main.querySelector('h1')?.innerText.replace('¶', '').trim(), links: [...document.querySelectorAll('nav a')].map(a => a.href),
        prose: prose.innerText, code: [...main.querySelectorAll('.input_area pre, .jp-InputArea pre')].map(e => e.innerText),
        outputs: [...main.querySelectorAll('.output_area, .jp-OutputArea-output')].map(e => e.innerText),
        examples: examples.length, example_outputs: examples.flatMap(c => [...c.querySelectorAll('.output_area')].map(o => o.innerText.trim())).filter(t => t),
        entries: [...main.querySelectorAll('.celltag_doc')].map(c => ({head: c.querySelector('h2, h3, h4')?.innerText.replace('¶', '').trim(),
                                                                        sig: c.querySelector('pre')?.innerText || ''})),
        highlighted: [...main.querySelectorAll('.highlight .k')].some(e => getComputedStyle(e).color !== getComputedStyle(main).color)}
"""

def pages() -> dict:
    "Each notebook's page (nbdev's name for it: 00_core.ipynb is core.html) and the module it exports, if any."
    from nbdev.config import nbpath2html
    res = {}
    for p in sorted((ROOT/'nbs').glob('*.ipynb')):
        m = re.search(r'#\|\s*default_exp\s+(\w[\w.]*)', p.read_text())
        res[nbpath2html(Path(p.name)).name] = f'ramabana.{m[1]}' if m else None
    return res

def from_the_run(texts:list[str], sources:str) -> list[str]:
    "What in `texts` (a page's outputs) only the run that made it could have written: this machine's paths, an address, its day, a time,"
    " a loopback port or an epoch time its own code and prose never wrote."
    import datetime as dt
    machine = [re.escape(str(ROOT)), re.escape(str(Path.home()).rstrip('/')) + '/', re.escape(tempfile.gettempdir()) + r'/\w',
               re.escape(sys.prefix), r'\b0x[0-9a-fA-F]{6,}\b']
    days = [str(dt.date.today() + dt.timedelta(days=d)) for d in (-1, 0, 1)]
    bad = []
    for t in texts:
        bad += [m[0] for rx in machine for m in re.finditer(rx, t)]
        bad += [d for d in days if d in t]
        bad += [m[0] for m in re.finditer(r'\b\d{2}:\d{2}:\d{2}\b', t) if m[0] not in sources]
        bad += [m[0] for m in re.finditer(r'\b(?:127\.0\.0\.1|localhost):(\d+)', t) if not re.search(rf'\b{m[1]}\b', sources)]
        bad += [m[0] for m in re.finditer(r'\b1[6-9]\d{8}\b', t) if m[0] not in sources]
    return bad

def test_docs_check_finds_what_the_run_left():
    "The check above, on made-up outputs: each kind is found, and a value the page's own code writes is not."
    import datetime as dt
    outs = [f'{ROOT}/nbs', f'{tempfile.gettempdir()}/tmpab12', '<A at 0x7f00aabbccdd>', f'{dt.date.today()}', 'at 12:34:56',
            'http://127.0.0.1:41234/v1', 'created 1796147044', 'http://127.0.0.1:8788/v1 at 15:47:54, /tmp/… and 0x…']
    src = "port 8788, the row at '15:47:54'"
    # one output at a time: the checkout may itself sit in the temp folder, and then its path is found twice
    assert not (missed := [o for o in outs[:-1] if not from_the_run([o], src)]), missed
    assert from_the_run(outs[-1:], src) == [], from_the_run(outs[-1:], src)

def test_docs_site_in_a_browser(browser, docs):
    "Every notebook has a page the sidebar reaches, with rendered prose and code and no directives; each page with examples shows what"
    " they produced, every name its module exports has an entry with its signature, and nothing from the machine that built it shows."
    import httpx, importlib
    d = browser
    d.get(f'{docs}/index.html')
    front = js(d, PAGE_CHECK)
    shot(d, 'docs-front-page')
    assert front['h1'] == 'ramabana', front['h1']
    shown = js(d, "return [...document.querySelectorAll('main pre')].map(e => e.innerText.trim())")
    assert './dev demo' in shown and './dev test' in shown, shown   # the README's two commands, as code blocks
    # the product at work, recorded: a %%ram question, its answer and status line, the calls table; and the diagram
    assert any(s.startswith('%%ram\n') for s in shown), shown
    assert any(re.search(r'in [\d,]+ .*· out [\d,]+ · 1 turn · \d+% of [\d,]+ · qwen2.5-coder-1.5b', o) for o in front['outputs']), front['outputs']
    assert any(s.split()[:4] == ['time', 'model', 'purpose', 'status'] and 'qwen2.5-coder-1.5b' in s for s in shown), shown
    assert any('magic ─► agent' in s and 'gateway ─► upstream' in s for s in shown), shown
    names = pages()
    want = {f'{docs}/{n}' for n in names}
    assert set(front['links']) == want, set(front['links']) ^ want
    for url in sorted(want):
        r = httpx.get(url, timeout=10)
        assert r.status_code == 200, url
        name = url.rsplit('/', 1)[1]
        d.get(url)
        cells = r.text.count('class="cell ')   # the whole page, not the part read so far
        wait_for(d, lambda d: js(d, "return document.querySelectorAll('main .cell').length") == cells, 30, f'{name} to show its {cells} cells')
        page = js(d, PAGE_CHECK)
        assert page['h1'] and page['title'].startswith(page['h1']), (name, page['title'], page['h1'])
        assert set(page['links']) == want, name   # the same sidebar everywhere
        raw = [l for l in page['prose'].splitlines() if re.match(r'\s*(#{1,6} |#\||```|In \[ *\d* *\]:)', l) or re.search(r'\*\*\w', l)]
        assert not raw, f'{name} shows raw Markdown or directives: {raw[:3]}'
        # the page's code, prose and signatures are the sources: a port or a time they write is not the run's
        bad = from_the_run(page['outputs'], '\n'.join([*page['code'], page['prose'], *(e['sig'] for e in page['entries'])]))
        assert not bad, f'{name} shows what only the run that built it knew: {bad[:5]}'
        if name == 'index.html': continue
        assert page['code'] and page['highlighted'], f'{name} shows no code cell, or no highlighted one'
        assert not [c for c in page['code'] if re.search(r'^\s*#\|', c, re.M)], f'{name} shows a #| directive in code'
        assert all(o.strip() for o in page['outputs']), f'{name} shows an empty output'
        assert not page['examples'] or page['example_outputs'], f'{name} has {page["examples"]} examples and shows what none of them produced'
        if mod := names[name]:
            sigs = {e['head']: e['sig'] for e in page['entries']}
            missing = [n for n in importlib.import_module(mod).__all__
                       if not re.search(rf'(^|\s){re.escape(n)}\s*[(=:,]', sigs.get(n, ''), re.M)]   # def n(, n = , n: T, n, m = ...
            assert not missing, f'{name}: no entry with a signature for {missing} of {mod}.__all__'
    d.get(f'{docs}/magic.html')
    shot(d, 'docs-magic')
