"""`%load_ext ramabana` and `%%ram` in real Jupyter kernels (jupyter_client, nbclient), against FakeLlamaServer.

Each test starts its own kernel with a config file naming the double as a llamacpp model (`base_url`), its own data
and task directories, and, where a notebook is attached, `JPY_SESSION_NAME` as Jupyter sets it. Every wait is bounded
and every kernel is shut down.
"""
import json, os, re, shutil, signal, time
from pathlib import Path
import pytest
from kernels import Kernel
from ramabana.llama_double import FakeLlamaServer, Reply, tool_call
from ramabana.compaction import notebook_cells

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT/'examples'/'demo.ipynb'

def env_for(tmp:Path, fake, nb:Path|None=None, ctx:int=8192, **extra) -> dict:
    "The kernel's environment: a config naming `fake` (model `fake`), private data dirs, the open notebook."
    cfg = tmp/'config.toml'
    cfg.write_text(f'[model]\ndefault = "fake"\n\n[model.fake]\nruntime = "llamacpp"\nbase_url = "{fake.url}/v1"\nctx = {ctx}\n')
    env = {**os.environ, 'RAMABANA_CONFIG': str(cfg), 'RAMABANA_DATA_DIR': str(tmp/'data'),
           'RAMABANA_TASK_DIR': str(tmp/'tasks'), **extra}
    env.pop('JPY_SESSION_NAME', None)
    env.pop('RAMABANA_SAVE_HOOK', None)   # as when no Jupyter server started the kernel: the kernel writes the notebook
    env.pop('RAMABANA_MODEL_DEFAULT', None)   # the config names the model (the suite's default would win over it)
    if nb: env['JPY_SESSION_NAME'] = str(nb)
    return env

@pytest.fixture
def kernel_for():
    made = []
    def mk(env, cwd):
        k = Kernel(env, cwd); made.append(k); return k
    yield mk
    for k in made: k.shutdown()

def texts(msgs, kind=None, mtype=None) -> list[str]:
    "The text/plain of display messages (of ramabana output `kind`, message type `mtype`)."
    return [m['content']['data'].get('text/plain', '') for m in msgs
            if m['header']['msg_type'] in ('display_data', 'update_display_data', 'execute_result')
            and (kind is None or (m['content'].get('metadata') or {}).get('ramabana') == kind)
            and (mtype is None or m['header']['msg_type'] == mtype)]

def stderr(msgs) -> str:
    return ''.join(m['content']['text'] for m in msgs if m['header']['msg_type'] == 'stream' and m['content']['name'] == 'stderr')

def errors(msgs) -> list:
    return [m['content'] for m in msgs if m['header']['msg_type'] == 'error']

def mk_nb(path:Path, cells:list[tuple]) -> Path:
    "Write a notebook of `(id, source, output_text, mode)` code cells."
    def cell(id, src, out='', mode=None):
        return dict(id=id, cell_type='code', execution_count=None, source=src,
                    metadata={'ramabana': {'compact': mode}} if mode else {},
                    outputs=[{'output_type': 'stream', 'name': 'stdout', 'text': out}] if out else [])
    path.write_text(json.dumps(dict(cells=[cell(*c) for c in cells], metadata={}, nbformat=4, nbformat_minor=5), indent=1))
    return path


def test_ask_streams_and_calls_a_tool(tmp_path, fake, kernel_for):
    "The answer streams into the cell (display_data, then update_display_data), a tool inspects the user's variable."
    k = kernel_for(env_for(tmp_path, fake), tmp_path)
    assert not errors(k.run('%load_ext ramabana'))
    k.run('sales = [120, 135, None, 150]')
    long = ' '.join(f'Month {i} of the export is {"missing: the export failed" if i == 3 else "there"}.' for i in range(1, 25))   # long, and no loop
    fake.script(Reply(tool_calls=[tool_call('inspect_python', {'name': 'sales'})]), long)
    msgs = k.run('%%ram --no-notebook\nWhy is March missing in sales?')
    assert not errors(msgs) and stderr(msgs) == '', (errors(msgs), stderr(msgs))
    tools = texts(msgs, 'tool')
    assert tools[0] == "⚙ inspect_python(name='sales')" and tools[-1].startswith("⚙ inspect_python(name='sales') → "), tools
    answers = texts(msgs, 'answer')
    assert texts(msgs, 'answer', 'display_data') and texts(msgs, 'answer', 'update_display_data'), [m['header']['msg_type'] for m in msgs]
    assert answers[-1] == long.rstrip() or answers[-1] == long, answers[-1]
    assert len(answers) < 60   # updates are throttled, not one per token
    status = texts(msgs, 'status')
    assert len(status) == 1 and status[0].endswith('of 8,192 · fake') and '1 turn' in status[0], status
    # the tool really looked at the kernel's variable
    tool_msg = [m for m in fake.last.json['messages'] if m['role'] == 'tool'][0]
    assert 'list' in tool_msg['content'] and '135' in tool_msg['content'], tool_msg
    calls = texts(k.run('%ram calls 5'))[0].splitlines()
    assert [re.split(r'\s{2,}', l)[1:4] for l in calls[2:]] == [['fake', 'turn', '200']] * 2, calls   # the time may hold a date


def test_answer_survives_a_killed_kernel(tmp_path, fake, kernel_for):
    "A kernel killed the moment a %%ram answer ends (SIGKILL) still has that call in the ledger of its in-process gateway."
    import sqlite3
    k = kernel_for(env_for(tmp_path, fake), tmp_path)
    k.run('%load_ext ramabana')
    fake.script('The answer.')
    msgs = k.run('%%ram --no-notebook\nA question?')
    assert texts(msgs, 'answer')[-1] == 'The answer.', texts(msgs)
    os.kill(k.km.provisioner.process.pid, signal.SIGKILL)   # no shutdown hook, no flush
    k.km.provisioner.process.wait(30)
    rows = sqlite3.connect(tmp_path/'data'/'ledger.sqlite').execute('SELECT model, purpose, status FROM model_calls').fetchall()
    assert rows == [('fake', 'turn', 200)], rows


def test_approval_through_stdin(tmp_path, fake, kernel_for):
    "run_python asks through the kernel's stdin: a yes runs the code in the user's namespace, a no refuses it."
    k = kernel_for(env_for(tmp_path, fake), tmp_path)
    k.run('%load_ext ramabana')
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'total = 2 + 3'})]), 'Done: total is 5.')
    msgs = k.run('%%ram --no-notebook\nset total to 2 + 3', replies=['y'])
    assert not errors(msgs) and stderr(msgs) == '', stderr(msgs)
    assert len(k.prompts) == 1 and 'run_python' in k.prompts[0] and 'total = 2 + 3' in k.prompts[0], k.prompts
    assert texts(k.run('total'))[0] == '5'
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'total = 0'})]), 'I did not change it.')
    k.run('%%ram --no-notebook\nset total to 0', replies=['n'])
    assert texts(k.run('total'))[0] == '5'
    tool_msg = [m for m in fake.last.json['messages'] if m['role'] == 'tool'][-1]
    assert 'declined' in tool_msg['content'], tool_msg
    assert texts(k.run('%ram approve auto'))[0] == 'approvals: auto'
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'total = 7'})]), 'Now 7.')
    k.run('%%ram --no-notebook\nset total to 7', replies=[])
    assert k.prompts == [] and texts(k.run('total'))[0] == '7'


def reply_to(k, mid:str, timeout:float=120) -> dict:
    "The content of the execute_reply to request `mid` (earlier replies nobody read are passed over)."
    while True:
        r = k.kc.get_shell_msg(timeout=timeout)   # raises queue.Empty after `timeout` s
        if r['parent_header'].get('msg_id') == mid: return r['content']

def next_inputs(reply:dict) -> list[dict]:
    return [p for p in reply.get('payload') or [] if p.get('source') == 'set_next_input']

def test_agent_code_lands_as_the_next_cell(tmp_path, fake, kernel_for):
    "An action turn's code that changed the kernel comes back as one set_next_input payload, marked as the agent's;"
    " its looks do not; a question whose code only looked lands nothing; run in a new kernel, the landed code gives the same state."
    k = kernel_for(env_for(tmp_path, fake), tmp_path)
    k.check('%load_ext ramabana'); k.check('%ram approve auto')
    k.check('north = [120, 135, None, 150]')
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'filled = [x or 0 for x in north]'})]),
                Reply(tool_calls=[tool_call('run_python', {'code': 'print(filled)'})]),
                Reply(tool_calls=[tool_call('run_python', {'code': 'filled.append(99)\ntotal = sum(filled)'})]),
                Reply(tool_calls=[tool_call('run_python', {'code': 'total = 1/0'})]),   # fails: does not land
                'Done: `total` is 504.')
    mid = k.send('%%ram --no-notebook\nmake filled, north with the gaps as 0, then add 99 and set total to its sum', 'ask')
    msgs = k.collect(mid)
    reply = reply_to(k, mid)
    assert reply['status'] == 'ok' and not errors(msgs) and stderr(msgs) == '', (reply, stderr(msgs))
    (p,) = next_inputs(reply)
    first, code = p['text'].split('\n', 1)
    assert p['replace'] is False
    assert re.fullmatch(r'# ramabana: the agent ran this for the %%ram cell above \(turn chat-[\w-]+\.1\)', first), first
    assert code == 'filled = [x or 0 for x in north]\n\nfilled.append(99)\ntotal = sum(filled)', code
    assert texts(k.run('total'))[0] == '504'

    # a question whose code only looked: no payload
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'total * 2'})]), 'Twice the total is 1008.')
    mid = k.send('%%ram --no-notebook\nWhat is twice the total?', 'ask2')
    k.collect(mid)
    assert next_inputs(reply_to(k, mid)) == []

    # the notebook from the top: the user's cell, then the landed one, in a new kernel, gives the kernel the agent left
    k2 = kernel_for(env_for(tmp_path, fake), tmp_path)
    k2.check('north = [120, 135, None, 150]'); k2.check(p['text'])
    assert texts(k2.run('total, filled'))[0] == '(504, [120, 135, 0, 150, 99])'

def test_agent_figure_shows_in_the_ram_cell(tmp_path, fake, kernel_for):
    "A plot the agent's code draws shows in the %%ram cell's output (matplotlib's inline backend), and the plotting code lands."
    pytest.importorskip('matplotlib')
    k = kernel_for(env_for(tmp_path, fake), tmp_path)
    k.check('%load_ext ramabana'); k.check('%ram approve auto')
    k.check('north = [120, 135, 140, 150]')
    plot = "import matplotlib.pyplot as plt\nplt.plot(north)\nplt.title('north')"
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': plot})]), 'The plot is above.')
    mid = k.send('%%ram --no-notebook\nplot north', 'ask')
    msgs = k.collect(mid)
    reply = reply_to(k, mid)
    pngs = [m for m in msgs if m['header']['msg_type'] == 'display_data' and 'image/png' in m['content']['data']]
    assert len(pngs) == 1, [m['header']['msg_type'] for m in msgs]
    (p,) = next_inputs(reply)
    assert p['text'].split('\n', 1)[1] == plot
    # `plt.show()` in the agent's code (it runs on a thread of its own) shows it in the same cell, once
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'plt.plot([3, 1, 2])\nplt.show()'})]), 'Shown.')
    msgs = k.run('%%ram --no-notebook\ndraw 3, 1, 2', 'ask2')
    assert len([m for m in msgs if m['header']['msg_type'] == 'display_data' and 'image/png' in m['content']['data']]) == 1, msgs


def test_notebook_that_does_not_fit(tmp_path, fake, kernel_for):
    "Attached to the open notebook: discard cells go first, then auto; keep cells and the asking cell stay."
    big = 'row ' * 450
    nb = mk_nb(tmp_path/'sales.ipynb', [('a1', 'print(log)', big, 'discard'), ('a2', 'north = [1, 2]', '', 'keep'),
                                          ('a3', 'print(report)', big), ('a4', 'x = 1', '', 'auto'),
                                          ('ask', '%%ram\nwhat is north?')])
    k = kernel_for(env_for(tmp_path, fake, nb, ctx=1300), tmp_path)
    k.run('%load_ext ramabana')
    fake.script('north is a list of two numbers.')
    msgs = k.run('%%ram\nwhat is north?', cell_id='ask')
    assert not errors(msgs) and stderr(msgs) == '', stderr(msgs)
    prompt = fake.last.json['messages'][-1]['content']
    (path, cells), = notebook_cells(prompt)
    assert path == 'sales.ipynb'
    ids = [c['id'] for c in cells]
    assert 'a1' not in ids and {'a2', 'ask'} <= set(ids), ids
    assert {c['id']: c['compact'] for c in cells}['ask'] == 'keep'
    # keep a3 from now on: written to the file, honoured at once
    assert texts(k.run('%ram keep a3'))[0] == 'cell a3: keep (saved in the notebook)'
    saved = json.loads(nb.read_text())
    assert saved['cells'][2]['metadata'] == {'ramabana': {'compact': 'keep'}}
    fake.script('Still two numbers.')
    k.run('%%ram\nwhat is north?', cell_id='ask')
    (_, cells), = notebook_cells(fake.last.json['messages'][-1]['content'])
    ids = [c['id'] for c in cells]
    assert 'a3' in ids and 'a1' not in ids, ids
    # the notebook is each turn's context: the second request carries it once, the first question without it
    users = [m['content'] for m in fake.last.json['messages'] if m['role'] == 'user']
    assert [u.count('<notebook path=') for u in users] == [0, 1], [u[:80] for u in users]
    # the cell a %ram command runs in is found by its cellId too
    assert texts(k.run('%ram discard', cell_id='a4'))[0] == 'cell a4: discard (saved in the notebook)'


def test_interrupt_cancels(tmp_path, kernel_for):
    "A kernel interrupt while the model reads the prompt cancels the turn: no traceback, the cell says so, the kernel lives."
    with FakeLlamaServer(n_batch=16) as fake:
        k = kernel_for(env_for(tmp_path, fake), tmp_path)
        k.run('%load_ext ramabana')
        fake.fail('slow_prefill', delay=0.5)
        fake.script('this answer is never streamed')
        mid = k.send('%%ram --no-notebook\n' + 'Tell me about these numbers: ' + ' '.join(map(str, range(400))))
        reading = lambda m: 'reading the conversation' in ''.join(texts([m], 'progress'))
        got = k.collect(mid, 90, until=reading)
        assert texts(got, 'progress')[0] == '… asking fake', texts(got)   # said at once, before the model answers
        t0 = time.monotonic()
        k.km.interrupt_kernel()
        rest = k.collect(mid, 60)
        assert time.monotonic() - t0 < 30
        msgs = got + rest
        assert not errors(msgs), errors(msgs)
        assert '(cancelled)' in texts(msgs, 'note'), texts(msgs)
        assert 'this answer' not in ' '.join(texts(msgs, 'answer'))
        deadline = time.monotonic() + 30
        while not fake.cancelled and time.monotonic() < deadline: time.sleep(0.1)
        assert fake.cancelled >= 1   # the request upstream was abandoned, not left running
        fake.script('back again')
        assert texts(k.run('%%ram --no-notebook\nstill there?'), 'answer')[-1] == 'back again'


def test_nbclient_attaches_to_the_demo(tmp_path, fake):
    "A headless nbclient run of the demo notebook with JPY_SESSION_NAME: the %%ram cell sees the notebook's cells."
    import nbformat
    from nbclient import NotebookClient
    nb_path = tmp_path/'demo.ipynb'
    shutil.copy(DEMO, nb_path)
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell('%load_ext ramabana'),
                 nbformat.v4.new_code_cell('%%ram\nHow was the missing March value filled in?')]
    nbformat.write(nb, nb_path)   # saved first, as a user would, so the file holds the asking cell
    fake.script('With the mean of February and April: 142.')
    from fastcore.xtras import modified_env
    env = env_for(tmp_path, fake, nb_path)
    # nbclient starts its kernel with this process's environment: for the run, the test's (without the suite's default model)
    with modified_env('RAMABANA_MODEL_DEFAULT', **env):
        NotebookClient(nb, timeout=120, kernel_name='python3', resources={'metadata': {'path': str(tmp_path)}}).execute()
    outs = nb.cells[-1].outputs
    shown = [o.get('data', {}).get('text/plain', '') for o in outs if o.get('output_type') == 'display_data']
    assert 'With the mean of February and April: 142.' in shown, outs
    assert not [o for o in outs if o.get('output_type') == 'error' or o.get('name') == 'stderr'], outs
    (path, cells), = notebook_cells(fake.last.json['messages'][-1]['content'])
    assert path == 'demo.ipynb'
    by_id = {c['id']: c for c in cells}
    assert 'north_filled' in by_id['5f77ab72']['source'] and by_id['5f77ab72']['outputs'] == '142'
    assert by_id[nb.cells[-1].id]['compact'] == 'keep'   # the asking cell, found by its source (nbclient sends no cellId)


def test_real_embedded_model(tmp_path, kernel_for):
    "One question to the embedded SmolLM2 through llama-server, decoding greedily; what it says is not asserted."
    from ramabana.llamaserver import setup
    setup(progress=False)   # at once when built; on a new machine this builds llama-server first (minutes)
    cfg = tmp_path/'greedy.toml'   # the built-in smollm2, greedy: the same answer on every run of this machine
    cfg.write_text('[model.smollm2.sampling]\ntemperature = 0.0\ntop_k = 1\nmax_tokens = 512\n')
    env = {**os.environ, 'RAMABANA_DATA_DIR': str(tmp_path/'data'), 'RAMABANA_TASK_DIR': str(tmp_path/'tasks'),
           'RAMABANA_CONFIG': str(cfg)}
    env.pop('JPY_SESSION_NAME', None)
    k = kernel_for(env, tmp_path)
    k.run('%load_ext ramabana')
    msgs = k.run('%%ram --no-notebook\nSay hello in one short sentence.', timeout=600)
    assert not errors(msgs) and stderr(msgs) == '', (errors(msgs), stderr(msgs))
    assert texts(msgs, 'answer') and texts(msgs, 'answer')[-1].strip(), (texts(msgs), stderr(msgs))
    assert texts(msgs, 'status')[0].endswith('of 8,192 · smollm2'), (texts(msgs, 'status'), stderr(msgs))
    row = texts(k.run('%ram calls 1'))[0].splitlines()[-1]
    assert re.split(r'\s{2,}', row)[1:4] == ['smollm2', 'turn', '200'], row   # the time cell may hold a date


def test_first_steps_read_well(tmp_path, fake, kernel_for):
    "What a new user meets before and around a first question: usage, explain, a wrong model name, a model that is down."
    env = env_for(tmp_path, fake)
    cfg = Path(env['RAMABANA_CONFIG'])
    cfg.write_text(cfg.read_text() + '\n[model.gone]\nruntime = "llamacpp"\nbase_url = "http://127.0.0.1:9/v1"\nctx = 4096\n')
    k = kernel_for(env, tmp_path)
    k.run('%load_ext ramabana')
    assert texts(k.run('%ram usage')) == ['no conversation yet · fake']
    ex = texts(k.run('%ram explain'))[0].splitlines()
    assert ex[0].startswith('Sampling for fake') and ex[1].split() == ['field', 'value', 'source'], ex
    assert texts(k.run('%ram')) == texts(k.run('%ram help'))   # a bare %ram is the help
    err = stderr(k.run('%ram model nonsense'))
    assert err.startswith("ramabana: unknown model 'nonsense'; the models are ") and ' fake,' in err and ' gone,' in err and 'config.toml)' in err, err
    assert stderr(k.run('%ram model smollm')) == "ramabana: unknown model 'smollm'; did you mean smollm2?\n"
    fake.script('It is 42.')
    msgs = k.run('%%ram --no-notebook\nwhat is 6*7?')
    status = texts(msgs, 'status')
    assert len(status) == 1 and re.fullmatch(r'in [\d,]+(?: \([\d,]+ cached\))? · out \d+ · 1 turn · \d+% of 8,192 · fake', status[0]), status
    assert '$' not in status[0]   # a local model costs nothing: no "$0.0000"
    k.run('%ram model gone')
    msgs = k.run('%%ram --no-notebook\nhello?')
    assert stderr(msgs) == ('ramabana: the model server at http://127.0.0.1:9/v1 is not reachable; is it running? '
                            '(`ramabana setup` builds the local one)\n'), stderr(msgs)
    assert not [t for t in texts(msgs, 'answer') if t], texts(msgs)   # the error is not shown as an answer, even briefly
    assert not errors(msgs)


def test_questions_reuse_the_cache(tmp_path, kernel_for):
    "Five questions on a 15-cell notebook with the embedded SmolLM2 (greedy): after the first, each reads little more than its new tokens."
    from ramabana.llamaserver import setup
    from ramabana.ledger import Ledger
    setup(progress=False)
    cells = [(f'c{i}', f'values_{i} = [{", ".join(str(i * j) for j in range(12))}]\nsum(values_{i})', f'{sum(i * j for j in range(12))}')
             for i in range(15)]
    nb = tmp_path/'numbers.ipynb'
    cfg = tmp_path/'greedy.toml'
    cfg.write_text('[model.smollm2.sampling]\ntemperature = 0.0\ntop_k = 1\nmax_tokens = 128\n')
    env = {**os.environ, 'RAMABANA_DATA_DIR': str(tmp_path/'data'), 'RAMABANA_TASK_DIR': str(tmp_path/'tasks'),
           'RAMABANA_CONFIG': str(cfg), 'JPY_SESSION_NAME': str(nb)}
    env.pop('RAMABANA_SAVE_HOOK', None)
    k = kernel_for(env, tmp_path)
    k.run('%load_ext ramabana')
    questions = ['Which cell has the largest sum?', 'What does cell c3 hold?', 'How many cells are there?',
                 'What does the edited cell hold now?', 'What does the new cell compute?']
    for q, question in enumerate(questions):
        if q == 3: cells[5] = ('c5', 'values_5 = [5, 10]\nsum(values_5)', '15')   # an edited cell
        if q == 4: cells.append(('c15', 'total = sum(map(sum, [values_1, values_2]))\ntotal', '198'))   # a new cell
        cells.append((f'ask{q}', f'%%ram\n{question}', ''))   # the asking cell, saved as JupyterLab would
        mk_nb(nb, cells)
        msgs = k.run(f'%%ram\n{question}', cell_id=f'ask{q}', timeout=600)
        assert not errors(msgs) and stderr(msgs) == '', (errors(msgs), stderr(msgs))
    led = Ledger(tmp_path/'data'/'ledger.sqlite')
    rows = list(reversed(led.recent(20, purpose='turn')))
    led.close()
    assert len(rows) == 5, rows
    for prev, r in zip(rows, rows[1:]):
        assert r['status'] == 200 and r['changed'] == -1, r   # the history only grew
        if prev['status'] != 200:   # an answer the loop guard cut (499): its tokens are not in the ledger, so only the share
            assert r['evaluated_tokens'] <= 0.2 * r['prompt_tokens'], (prev, r)
            continue
        new = r['prompt_tokens'] - prev['prompt_tokens'] - prev['completion_tokens']
        assert r['cached_tokens'] >= prev['prompt_tokens'], (prev, r)   # everything the server read before came from its cache
        assert r['evaluated_tokens'] <= 1.2 * new + 8, (new, prev, r)   # +8: the previous answer's end, tokenised afresh
