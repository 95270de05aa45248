"""`%%ram` and `%ram` end to end in a real Jupyter kernel (jupyter_client): the in-process gateway, `FakeLlamaServer`
as the model, the session's ledger and the open notebook.

09_magic shows a reader a question end to end, the subcommands, the mistakes and the start of a notebook that does not
fit; this file drives the rest of what its tail once held: a question with no notebook open, a priced model's usage,
that notebook further (`%ram keep`, what later questions carry, `read_cell`), a model that is not reachable and one
that answers nothing. The cells run in the kernel as the notebook ran them (the double is started there, with its
config file, and assertions run there); the asking cell is named by the `cellId` of the request, as JupyterLab sends
it. Each test has its own kernel and directories; every wait is bounded and every kernel is shut down.
"""
import os
import pytest
from kernels import Kernel


# What the notebook had defined before its tail: its hidden setup cell, `ram_err`, the extension loaded, the double
# started and named `fake` (8,192 tokens) and `tiny` (1,408) in a config file, the session's display captured.
SETUP = '''
from fastcore.test import *
import os, re, io
from pathlib import Path
from IPython.utils.capture import capture_output
from ramabana.core import usd
from ramabana.display import *
from ramabana.notebook import write_json_atomic, read_notebook, nb_cells
from ramabana.compaction import notebook_cells
from ramabana.llama_double import FakeLlamaServer, Reply, tool_call
_tmp = Path(os.environ['TEST_TMP'])
def mk_nb(*cells):
    "A minimal nbformat 4.5 notebook from `(id, source, outputs, mode)` tuples."
    def cell(id, src, outs=(), mode=None):
        md = {'ramabana': {'compact': mode}} if mode else {}
        if id.startswith('md'): return dict(id=id, cell_type='markdown', metadata=md, source=src)
        return dict(id=id, cell_type='code', metadata=md, source=src, execution_count=None,
                    outputs=[{'output_type': 'stream', 'name': 'stdout', 'text': o} for o in outs])
    return dict(cells=[cell(*c) for c in cells], metadata={}, nbformat=4, nbformat_minor=5)
def ram_err(line):
    with capture_output() as c: r = get_ipython().run_line_magic('ram', line)
    assert r is None, r
    return c.stderr.strip()
'''

FAKE = '''
%load_ext ramabana
import ramabana.magic as M
fake = FakeLlamaServer(tools=True).start()
cfg = _tmp/'config.toml'
cfg.write_text(f'[model.fake]\\nruntime = "llamacpp"\\nbase_url = "{fake.url}/v1"\\nctx = 8192\\n\\n'
               f'[model.tiny]\\nruntime = "llamacpp"\\nbase_url = "{fake.url}/v1"\\nctx = 1408\\n')
os.environ['RAMABANA_CONFIG'] = str(cfg)
north = [120, 135, None, 150]
shown = []
s = M.session()
s.show = lambda b, id, up, kind: shown.append((kind, up, b['text/plain']))
_ = get_ipython().run_line_magic('ram', 'model fake')
'''

@pytest.fixture
def kernel(tmp_path):
    "A kernel with the notebook's setup run: private data and task dirs, no Jupyter session, the double as `fake`."
    env = {**os.environ, 'RAMABANA_DATA_DIR': str(tmp_path/'data'), 'RAMABANA_TASK_DIR': str(tmp_path/'task'),
           'RAMABANA_CONFIG': str(tmp_path/'config.toml'), 'TEST_TMP': str(tmp_path)}
    for k in ('JPY_SESSION_NAME', 'RAMABANA_SAVE_HOOK'): env.pop(k, None)   # plain IPython's view: no notebook open, the kernel writes it
    k = Kernel(env, tmp_path)
    try:
        k.check(SETUP); k.check(FAKE)
        yield k
        k.check('fake.stop()')
    finally: k.shutdown()


def test_priced_usage(kernel):
    "A priced model's `%ram usage` adds what the session and its last turn cost, as the ledger wrote it; a model without a price says so."
    kernel.check('''
cfg.write_text(cfg.read_text() + f'\\n[model.paid]\\nruntime = "llamacpp"\\nbase_url = "{fake.url}/v1"\\nctx = 8192\\n'
               'price = { input = 1.0, output = 2.0 }\\n'
               f'\\n[model.hosted]\\nruntime = "openai_compatible"\\nbase_url = "{fake.url}/v1"\\nctx = 8192\\n')
fake.script('Priced.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '-m paid --no-notebook', 'What does this cost?')
test_eq((c.stderr, s.last.answer), ('', 'Priced.'))
rows = %ram calls 1
from ramabana.display import ledger_rows
row = ledger_rows(1)[0]
test_close(row['cost_usd'], (row['prompt_tokens'] * 1.0 + row['completion_tokens'] * 2.0) / 1e6, eps=1e-12)
u = %ram usage
test_eq(u.splitlines()[-1], f"cost: ${usd(row['cost_usd'])} this session, ${usd(row['cost_usd'])} the last turn")
assert f"${row['cost_usd']:.4f}" in u.splitlines()[0], u   # the status line has it too
_ = %ram reset
fake.script('Who knows.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '-m hosted --no-notebook', 'And this?')
u = %ram usage
test_eq(u.splitlines()[-1], f"cost: ${usd(row['cost_usd'])} this session for the calls with a price; the model 'hosted' has no "
                           "price (`price = { input = ..., output = ... }` in its [model.\\"hosted\\"] table)")
_ = %ram model fake
''')


def test_notebook_that_does_not_fit(kernel):
    "Attached to a notebook too large for `tiny`: cells left out in order, `%ram keep`, what later questions carry, `read_cell`."
    # the sales notebook with a large `discard` cell and a large `auto` cell; the kernel's history is made up
    kernel.check('''
big = 'row ' * 900
nb3 = mk_nb(('md1', '# Sales'), ('c1', 'print(log)', [big], 'discard'), ('c2', 'north = load()', [], 'keep'),
            ('c3', 'print(report)', [big]), ('ask', '%%ram\\nwhat is in north?'))
nbp = _tmp/'sales.ipynb'; write_json_atomic(nbp, nb3)
get_ipython().user_ns['__session__'] = str(nbp)
s.kernel_history = lambda: (['', 'north = load()', 'x = 1', '%%ram\\nwhat is in north?'], {})   # the last is the running cell
_ = get_ipython().run_line_magic('ram', 'reset')
_ = get_ipython().run_line_magic('ram', 'model tiny')
fake.script('north holds the monthly sales.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '', 'what is in north?')
test_eq(c.stderr, '')
sent_prompt = fake.last.json['messages'][-1]['content']
(_, got), = notebook_cells(sent_prompt)
test_eq([c['id'] for c in got], ['c2', 'ask', 'run-2'])
test_eq(sent_prompt.count('what is in north?'), 1)   # the asking cell points at the question instead of repeating it
assert '<context-compacted omitted="3" discard="1" auto="2" ids="md1 c1 c3"/>' in sent_prompt, sent_prompt[:400]
''', cell_id='ask')
    # with c3 set to keep it comes in; the whole notebook is sent again, and the first block becomes a note
    kernel.check('''
k = %ram keep c3
test_eq(k, 'cell c3: keep (saved in the notebook)')
test_eq(nb_cells(read_notebook(nbp))[3]['compact'], 'keep')
fake.script('Still the monthly sales.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '', 'what is in north?')
(_, got), = notebook_cells(fake.last.json['messages'][-1]['content'])
test_eq([c['id'] for c in got][:3], ['c2', 'c3', 'ask'])
from ramabana.agent import CONTEXT_NOTE
assert s.agent.history[0]['content'].startswith(CONTEXT_NOTE)   # the first block is gone: the model sees one notebook
''', cell_id='ask')
    # `%ram keep` alone in its own cell says it would apply to nothing
    kernel.check('''
nbk = _tmp/'keep.ipynb'; write_json_atomic(nbk, mk_nb(('c1', 'north = load()'), ('k1', '%ram keep')))
ip = get_ipython(); before = ip.user_ns['__session__']
ip.user_ns['__session__'] = str(nbk)
try: test_eq(ram_err('keep'), 'ramabana: this cell holds only %ram commands, so the setting would apply to nothing: put '
             '`%ram keep` on the first line of the cell it is for, or name that cell: %ram keep CELL_ID')
finally: ip.user_ns['__session__'] = before
test_eq(nb_cells(read_notebook(nbk))[1]['compact'], 'auto')
''', cell_id='k1')
    # history shows each question as typed; later questions carry what changed, or nothing
    kernel.check('''
h = %ram history
test_eq([l for l in h.splitlines() if l.startswith('user:')], ['user: what is in north? (with the notebook)'] * 2)
_ = get_ipython().run_line_magic('ram', 'model fake')
from ramabana.runtime import APPROVAL_NOTICE, notices_block
users = [m['content'] for m in s.agent.history if m['role'] == 'user']
test_eq([u.split(' ', 1)[0] for u in users], ['[the', '<notebook'])
assert users[0].endswith('what is in north?' + notices_block('what is in north?')), users[0][-200:]
fake.script('Going ahead.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '', 'ok')
sent = fake.last.json['messages'][-1]['content']
test_eq(sent, 'ok' + notices_block('ok'))   # nothing changed: the question alone
assert APPROVAL_NOTICE in sent
test_eq(sum(m['content'].count('<notebook path=') for m in fake.last.json['messages'] if m['role'] == 'user'), 1)
''', cell_id='ask')
    # an edited cell comes as what changed, after everything the server has cached
    kernel.check('''
before = fake.last.json['messages']
nb3['cells'][2]['source'] = 'north = load(2024)'; write_json_atomic(nbp, nb3)
fake.script('Now 2024.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '', 'and now?')
now = fake.last.json['messages']
test_eq(now[:len(before)], before + [])   # the conversation so far, unchanged
msg = now[-1]['content']
assert msg.startswith('<notebook-changes path=') and '<cell id="c2" change="edited">\\nnorth = load(2024)\\n</cell>' in msg, msg
''', cell_id='ask')
    # a new question cell at the end is no change to tell: the question alone, and the next change still comes
    kernel.check('''
nb3['cells'].append({'id': 'ask2', 'cell_type': 'code', 'metadata': {}, 'outputs': [], 'execution_count': None, 'source': '%%ram\\nand then?'})
write_json_atomic(nbp, nb3)
fake.script('Then nothing.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '', 'and then?')
test_eq(fake.last.json['messages'][-1]['content'], 'and then?' + notices_block('and then?'))
nb3['cells'][2]['source'] = 'north = load(2025)'; write_json_atomic(nbp, nb3)
fake.script('Now 2025.')
with capture_output() as c: get_ipython().run_cell_magic('ram', '', 'and now?')
msg = fake.last.json['messages'][-1]['content']
assert msg.startswith('<notebook-changes path=') and 'change="edited"' in msg and 'ask2' not in msg, msg
''', cell_id='ask2')
    # a cell left out is one `read_cell` away
    kernel.check('''
read_cell = M.cell_reader(s)
full = read_cell('c1')
assert full.startswith('print(log)') and full.count('row') == 900 and 'omitted' not in full, full[:100]
assert read_cell('zz').startswith("error: no cell 'zz'; the cells are: md1, c1, c2, c3, ask"), read_cell('zz')
s.kernel_history = lambda: (['', 'north = load()', 'x = 1', 'report()'], {3: 'line\\n' * 1000})   # a long result, not saved
full = read_cell('run-3')
assert full.count('line') == 1000 and 'omitted' not in full, full[-200:]
del get_ipython().user_ns['__session__'], s.kernel_history
''', cell_id='ask')


def test_no_notebook_said_once(kernel):
    "In a shell no Jupyter session started, a question without `--no-notebook` says once that there is no notebook, and goes ahead."
    kernel.check('''
fake.script('First.', 'Second.')
with capture_output() as c:
    get_ipython().run_cell_magic('ram', '', 'one?')
    get_ipython().run_cell_magic('ram', '', 'two?')
test_eq((c.stdout.count('no open notebook found'), s.last.answer), (1, 'Second.'))
''')


def test_unreachable_and_empty_models(kernel):
    "A model not reachable, or one that answers nothing, is one line on stderr, never shown as an answer."
    kernel.check('''
cfg.write_text(cfg.read_text() + '\\n[model.gone]\\nruntime = "llamacpp"\\nbase_url = "http://127.0.0.1:9/v1"\\nctx = 8192\\n')
_ = get_ipython().run_line_magic('ram', 'model gone')
n_shown = len(shown)
with capture_output() as c: get_ipython().run_cell_magic('ram', '--no-notebook', 'hello?')
test_eq(c.stderr, 'ramabana: the model server at http://127.0.0.1:9/v1 is not reachable; is it running? (`ramabana setup` builds the local one)\\n')
test_eq(s.last.answer, '')
assert not [t for k, up, t in shown[n_shown:] if k == 'answer'], shown[n_shown:]   # the error never showed as an answer
''')
    kernel.check('''
_ = get_ipython().run_line_magic('ram', 'model fake')
fake.script(Reply(content=''))
n_shown = len(shown)
with capture_output() as c: get_ipython().run_cell_magic('ram', '--no-notebook', 'anything?')
test_eq((c.stderr, s.last.answer), ('ramabana: the model returned an empty reply\\n', ''))
test_eq([t for k, up, t in shown[n_shown:] if k == 'answer' and t], [])
''')
