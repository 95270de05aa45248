"""`Agent` end to end: turns through a real in-process gateway (`start_gateway`, 127.0.0.1) against `FakeLlamaServer`,
whose script plays the model, and the Anthropic double where a hosted model matters.

What 08b_agent shows a reader (a task with a tool call and an approval, a hosted model, a resumed session, a cancel, a
conversation past its window) stays there; this file drives the rest: contexts kept, dropped and resent, what `fits`
counts, repeated calls and the tool-call budget, reminders to narrate, chat callbacks, reasoning kept in the session, a
broken stream and a model that cannot start, cancels during a tool, summary models and the ledger, `switch` and `reset`.
Each test has its own gateway, double, ledger and task directory; every wait is bounded.
"""
import threading, time
import pytest
from fastcore.test import test_eq as eq, test_fail as fails   # renamed: pytest would collect `test_*` names as tests
from ramabana.core import ModelSpec, task_dir
from ramabana.agent import Agent, SessionFile, CONTEXT_NOTE, BUDGET_NOTE, REPEAT_FAILED
from ramabana.llama_double import FakeLlamaServer, Reply, tool_call
from ramabana.hosted_doubles import FakeAnthropic, HostedReply as HReply


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    "The notebook's settings: private task and data directories, no config file of the user's, a key for the Anthropic double."
    monkeypatch.setenv('RAMABANA_TASK_DIR', str(tmp_path/'tasks'))
    monkeypatch.setenv('RAMABANA_DATA_DIR', str(tmp_path/'data'))
    monkeypatch.setenv('RAMABANA_CONFIG', str(tmp_path/'config.toml'))   # not there: the defaults
    monkeypatch.setenv('RAMABANA_TEST_ANTHROPIC_KEY', 'test-key')

@pytest.fixture
def agents():
    "Agents made by a test, closed after it."
    made = []
    def mk(*a, **kw):
        x = Agent(*a, **kw); made.append(x); return x
    yield mk
    for x in made: x.close()

def sales_turn(agent, fake, fspec, gw):
    "The notebook's first task: an agent inspects `sales`, runs code the user approves, and answers."
    a = agent(fspec, ns={'sales': {'jan': 10, 'feb': 0, 'mar': 12}}, ask=lambda name, args: 'y', base_url=gw.url)
    fake.script(Reply('Let me look at the data.', tool_calls=[tool_call('inspect_python', {'name': 'sales'})]),
                Reply(tool_calls=[tool_call('run_python', {'code': "min(sales, key=sales.get)"})]),
                'February has no sales: `sales["feb"]` is 0.')
    eq(a.ask('Which month had no sales?'), 'Let me look at the data.\n\nFebruary has no sales: `sales["feb"]` is 0.')
    return a

def long_conversation(agent, fake, small, gw):
    "The notebook's 2,048-token conversation past its window: eight long messages, compacted surgically on the way."
    d = agent(small, base_url=gw.url)
    notes = []
    for i in range(8):
        fake.script(f'answer {i}')
        eq(d.ask(f'message {i}: ' + 'words about the data ' * 60, on_status=notes.append), f'answer {i}')
        assert d.backend.used_tokens < small.ctx, d.backend.used_tokens
    assert d.compactor.count >= 1 and 'compacting the conversation' in notes, (d.compactor.count, notes)
    return d


def test_context_kept_dropped_and_resent(fake, fspec, gw, agents):
    "A turn's context stays in the conversation (saved as `CONTEXT_NOTE`), `drop_contexts` removes it, a resumed one places it after the saved turns, a compaction resends the whole notebook."
    ctxa = agents(fspec, base_url=gw.url)
    fake.script('It has 3 cells.', 'Yes.')
    nb1 = '<notebook path="a.ipynb"><cell id="c1">x = 1</cell></notebook>'
    ctxa.ask('How many cells?', context=nb1)
    first = fake.last.json['messages']
    assert first[-1]['content'].startswith(nb1)
    ctxa.ask('Sure?')
    sent = fake.last.json['messages']
    eq(sent[:len(first)], first)   # byte for byte what the server has cached
    eq((ctxa.holds_contexts([nb1]), ctxa.holds_contexts(['<notebook other>']), ctxa.holds_contexts([])), (True, False, False))
    saved = SessionFile(task_dir(ctxa.task)/'session.jsonl').load()
    assert saved[0]['content'].startswith(CONTEXT_NOTE) and 'How many cells?' in saved[0]['content'], saved[0]
    eq(saved[1:], ctxa.history[1:])
    # drop_contexts: the note in the conversation too, and nothing held after it
    eq(ctxa.drop_contexts(), True)
    assert ctxa.history[0]['content'].startswith(CONTEXT_NOTE) and '<notebook' not in ctxa.history[0]['content']
    eq((ctxa.holds_contexts([nb1]), ctxa.drop_contexts()), (False, False))
    ctxa.close()
    # a resumed conversation places the turn's context on that turn's message, after the resumed ones
    fake.script('Three.', 'Still three.')
    ctxb = agents(fspec, task=ctxa.task, base_url=gw.url)
    nb2 = '<notebook path="a.ipynb"><cell id="c1">x = 2</cell></notebook>'
    ctxb.ask('And now?', context=nb2)
    ctxb.ask('Sure?')
    users = [m['content'] for m in ctxb.history if m['role'] == 'user']
    assert users[0].startswith(CONTEXT_NOTE) and 'How many cells?' in users[0], users[0]   # as saved before
    assert users[2].startswith(nb2) and ctxb.holds_contexts([nb2]), users[2]
    saved = [m['content'] for m in SessionFile(task_dir(ctxb.task)/'session.jsonl').load() if m['role'] == 'user']
    assert saved[2].startswith(CONTEXT_NOTE) and 'And now?' in saved[2] and not any('x = 2' in m for m in saved), saved
    # a compaction before the turn: `ask` sends what `refresh()` gives, the whole notebook again
    fake.script('Fine.')
    ctxb.compactor.strategy = 'surgical'   # no summary model needed
    made = []
    def whole(): made.append(1); return '<notebook path="a.ipynb"><cell id="c1">x = 3</cell></notebook>'
    ctxb.maybe_compact = lambda nxt='': ctxb.compact()   # as if the window were full
    ctxb.ask('What changed?', context='<notebook-changes path="a.ipynb"><cell id="c1" change="edited">x = 3</cell></notebook-changes>', refresh=whole)
    eq(made, [1])
    assert fake.last.json['messages'][-1]['content'].startswith('<notebook path="a.ipynb"><cell id="c1">x = 3')
    assert not any('<notebook-changes' in str(m.get('content')) for m in fake.last.json['messages'])


def test_fits_counts_the_context_not_its_notices(fake, gw, agents):
    "`fits(prompt, context)` says whether the turn's message fits; the notices come from the prompt alone ('ok' is an approval)."
    from ramabana.runtime import APPROVAL_NOTICE
    tiny = ModelSpec('fake-tiny', 'llamacpp', ctx=1280, base_url=fake.url + '/v1')   # room to spare: the system prompt and tool schemas take ~570 tokens of it
    gw.gateway.extra_models['fake-tiny'] = tiny
    fa2 = agents(tiny, base_url=gw.url)
    nb_block = '<notebook path="a.ipynb"><cell id="c1">' + 'x = 1\n' * 300 + '</cell></notebook>'
    eq((fa2.fits('ok', nb_block[:200]), fa2.fits('ok', nb_block)), (True, False))
    fake.script('Done.')
    fa2.ask('ok', context=nb_block[:200])
    assert APPROVAL_NOTICE in fake.last.json['messages'][-1]['content']
    eq(['<notebook' in m['content'] for m in fa2.history if m['role'] == 'user'], [True])   # kept


def test_repeats_and_the_budget(fake, fspec, gw, agents):
    "The same call with the same result gets `REPEAT_NOTICE` (in a row or taking turns) and ends the turn the third time (`SAME_NOTE`), the same failing code `REPEAT_FAILED`, a spent budget `BUDGET_NOTE`."
    from ramabana.backend import SAME_NOTE
    r = agents(fspec, ns={'v': 1}, base_url=gw.url, budget=4)
    fake.script(*[Reply(tool_calls=[tool_call('inspect_python', {'name': 'v'})]) for _ in range(5)], 'I keep looking at v.')
    eq(r.ask('what is v?'), SAME_NOTE.format(n=3))
    results = [m['content'] for m in r.history if m['role'] == 'tool']
    eq(len(results), 3)
    assert 'same call' not in results[0] and 'same call 2 times' in results[1] and 'same call 3 times' in results[2], results
    fake.replies.clear()
    r = agents(fspec, ns={'v': 1}, base_url=gw.url, budget=4)
    fake.script(*[Reply(tool_calls=[tool_call('inspect_python', {'name': n})]) for n in ('v', 'v.real', 'v.imag', 'v.numerator', 'v.denominator')], 'v is 1.')
    eq(r.ask('what is v?'), 'v is 1.')
    results = [m['content'] for m in r.history if m['role'] == 'tool']
    eq((len(results), results[4], r.run.calls), (5, BUDGET_NOTE.format(n=4), 4))
    looks = [Reply(tool_calls=[tool_call('inspect_python', {'name': n})]) for n in 'vwvw']   # two calls taking turns
    fake.script(*looks, 'v is 1.')
    r = agents(fspec, ns={'v': 1, 'w': 2}, base_url=gw.url)
    eq(r.ask('what is v?'), 'v is 1.')
    eq(['same call' in m['content'] for m in r.history if m['role'] == 'tool'], [False, False, True, True])
    fails = [Reply(tool_calls=[tool_call('run_python', {'code': '1/0'})]) for _ in range(2)]   # the same failing code twice
    fake.script(*fails, 'It fails.')
    r = agents(fspec, ns={}, base_url=gw.url, approve='auto')
    eq(r.ask('what is 1/0?'), 'It fails.')
    results = [m['content'] for m in r.history if m['role'] == 'tool']
    assert 'ZeroDivisionError' in results[1] and REPEAT_FAILED.format(n=2) in results[1] and 'same' not in results[0], results


def test_air_reminder_and_quiet_backends(fake, fspec, gw, agents):
    "After eight silent calls in a row the model is reminded to say where things stand; a backend that does not narrate is not, and its status names the tool."
    from ramabana.runs import AIR_NOTICE
    q = agents(fspec, ns={'v': 1}, base_url=gw.url)
    fake.script(*[Reply(tool_calls=[tool_call('inspect_python', {'name': 'v' + '.real' * i})]) for i in range(8)], 'Done.')
    eq(q.ask('look around'), 'Done.')
    results = [m['content'] for m in q.history if m['role'] == 'tool']
    assert AIR_NOTICE in results[7] and not any(AIR_NOTICE in x for x in results[:7]), results
    q, said = agents(fspec, ns={'v': 1}, base_url=gw.url), []
    q.backend.narrates = False   # as on a runtime in QUIET_RUNTIMES
    fake.script(*[Reply(tool_calls=[tool_call('inspect_python', {'name': 'v' + '.real' * i})]) for i in range(8)], 'Done.')
    eq(q.ask('look around', on_status=said.append), 'Done.')
    assert not any(AIR_NOTICE in m['content'] for m in q.history if m['role'] == 'tool'), q.history
    eq(said, ['running inspect_python'])


def test_chat_callback_stays_through_a_switch(fake, fspec, gw, agents):
    "`add_chat_callback` takes a name from `CHAT_CALLBACKS`; the callback stays through a `switch`; an unknown name fails."
    from ramabana.conversation import TokenLogger
    q = agents(fspec, ns={'v': 1}, base_url=gw.url)
    logged = []
    TokenLogger.sink = logged.append
    try:
        q.add_chat_callback('tokens')
        fake.script('one'); q.ask('hi')
        q.switch(fspec); fake.script('two'); q.ask('hi again')
    finally: TokenLogger.sink = print
    eq(len(logged), 2)
    assert logged[0].startswith('fake: fake · in ')
    fails(lambda: q.add_chat_callback('nope'), contains="unknown callback 'nope'")


def test_reasoning_kept_and_sent_back(fake, gw, agents):
    "A model's reasoning is kept beside its answer in the session, and a resumed conversation sends it back to a server whose template reads it."
    with FakeLlamaServer(reasoning=True) as thinker:
        tspec = ModelSpec('thinker', 'llamacpp', ctx=8192, base_url=thinker.url + '/v1')
        gw.gateway.extra_models['thinker'] = tspec
        thinker.script(Reply('Take the tram.', reasoning='trams are quicker here'), 'And the boat back.')
        t1 = agents(tspec, base_url=gw.url)
        t1.ask('How should I travel?')
        kept = SessionFile(task_dir(t1.task)/'session.jsonl').load()[-1]
        eq((kept['content'], kept['reasoning_content']), ('Take the tram.', 'trams are quicker here'))
        t2 = agents(tspec, task=t1.task, base_url=gw.url)
        t2.ask('And back?')
        back = [m for m in thinker.last.json['messages'] if m['role'] == 'assistant'][0]
        eq(back.get('reasoning_content'), 'trams are quicker here')   # its template renders reasoning_content
        del gw.gateway.extra_models['thinker']


def test_broken_turn_and_missing_server_keep_the_session(fake, fspec, gw, agents):
    "A turn cut off mid-stream is not saved and the session still loads; a resumed conversation whose model cannot start says why and keeps its session."
    a = sales_turn(agents, fake, fspec, gw)
    b = agents(fspec, task=a.task, base_url=gw.url)
    fake.script('Yes, February.')
    eq(b.ask('So it was February?'), 'Yes, February.')
    n = len(SessionFile(task_dir(b.task)/'session.jsonl').load())
    fake.fail('cut', times=2)   # the gateway continues a broken stream once; the second break reaches us
    shown = []
    out = b.ask('this one breaks', on_discard=shown.append)
    assert out.startswith('You said:') and '[error: fake failed: the stream from' in out and out.count('You said') == 1, out
    eq(shown, [])   # continued where it broke: nothing to take back
    eq(len(fake.faults), 0)
    eq(len(SessionFile(task_dir(b.task)/'session.jsonl').load()), n)
    # the model cannot start: the saved conversation is there for the next try (it was once saved as empty)
    fresh = agents(fspec, task=b.task, base_url=gw.url)
    def no_server(): raise OSError('llama-server is not built')
    fresh.backend._start = no_server
    eq(fresh.ask('are you there?'), 'fake could not start: OSError: llama-server is not built')
    eq(len(SessionFile(task_dir(b.task)/'session.jsonl').load()), n)
    eq(len(fresh.history), n)


def test_cancel_while_a_tool_runs(fake, fspec, gw, agents):
    "A cancel while a tool runs interrupts the code inside the user's namespace and ends the turn."
    ns2 = {}
    h = agents(fspec, ns=ns2, approve='auto', base_url=gw.url)
    fake.script(Reply(tool_calls=[tool_call('run_python', {'code': 'import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)'})]), 'not reached')
    res, t0 = [], time.monotonic()
    th = threading.Thread(target=lambda: res.append(h.ask('count forever')), daemon=True)
    th.start()
    for _ in range(1000):
        if ns2.get('n', 0) > 5: break
        time.sleep(0.01)
    assert h.cancel(); th.join(10)
    assert not th.is_alive() and time.monotonic() - t0 < 8, time.monotonic() - t0
    eq((res, h.run.state), ([''], 'cancelled'))
    n = ns2['n']; time.sleep(0.2); eq(ns2['n'], n)   # the loop is no longer running
    assert h.history[-1]['content'] == 'error:\nstopped: the user cancelled the turn', h.history[-1]
    fake.replies.clear()


def test_cancel_during_a_native_call(gw, agents):
    "Code in a native call (a long `time.sleep`) is not interrupted there, yet the turn ends at once; the next call gets `CANCELLED_CALL`, so the Anthropic double accepts the conversation."
    from ramabana.backend import CANCELLED_CALL
    with FakeAnthropic() as fa3:
        claude3 = ModelSpec('claude-cancel', 'anthropic', model_id='claude-sonnet-4-5', base_url=fa3.url, api_key_env='RAMABANA_TEST_ANTHROPIC_KEY', ctx=200_000)
        gw.gateway.extra_models[claude3.name] = claude3
        ns3 = {}
        fa3.push(HReply('Two steps.', tool_calls=[('run_python', {'code': 'import time\nstarted = True\ntime.sleep(6)'}), ('run_python', {'code': 'x = 1'})]))
        k = agents(claude3, ns=ns3, approve='auto', base_url=gw.url)
        res = []
        th = threading.Thread(target=lambda: res.append(k.ask('two steps')), daemon=True)
        th.start()
        for _ in range(1000):
            if ns3.get('started'): break
            time.sleep(0.01)
        t0 = time.monotonic()
        assert k.cancel(); th.join(10)
        assert not th.is_alive() and time.monotonic() - t0 < 4.5, time.monotonic() - t0
        results = [m['content'] for m in k.history if m['role'] == 'tool']
        assert results[0].startswith('error:\nstopped: the user cancelled the turn, but the code could not be interrupted'), results
        eq((results[1], 'x' in ns3), (CANCELLED_CALL, False))
        fa3.push(HReply('All right.'))
        eq(k.ask('what happened?'), 'All right.')
        k.close()


def test_summary_model_usage_and_switch(fake, fspec, small, gw, agents):
    "A summary model writes the summary (purpose `compaction` in the ledger), `usage` adds its tokens as the ledger does, another summary model keeps counting; `switch` keeps the usage, `reset` forgets."
    e = agents(small, base_url=gw.url, summariser=fspec)
    for i in range(4):   # the summary takes the last scripted answer, and the double echoes that turn's message: no loop in it
        fake.script(f'answer {i}')
        e.ask(f'message {i}: ' + ' '.join(f'point {j} of the data;' for j in range(60)))
    fake.script('The user sent four messages about the data; each was answered.')
    note = e.compact('the data')
    assert note.startswith('compacted') and 'into a summary' in note, note
    assert 'The user sent four messages' in e.history[0]['content']
    gw.gateway.ledger.flush()
    rows = [r for r in gw.gateway.ledger.recent(50, purpose='compaction')]
    assert rows and rows[0]['model'] == 'fake', rows[:1]
    def ledger_input(task, want, timeout=10):
        "The prompt tokens the ledger holds for `task`, once they reach `want` (the gateway writes after each stream)."
        end = time.monotonic() + timeout
        while True:
            gw.gateway.ledger.flush()
            got = sum(r['prompt_tokens'] or 0 for r in gw.gateway.ledger.recent(100, task=e.task))
            if got == want or time.monotonic() > end: return got
            time.sleep(0.02)
    assert e._sum_be.usage.input > 0
    eq(ledger_input(e.task, e.usage.input), e.usage.input)
    eq(e.usage.turns, 4)
    u = e.usage
    e.summariser_model = small   # another summary model from now on: the first one's summaries still count
    for i in range(4, 6):
        fake.script(f'answer {i}')
        e.ask(f'message {i}: ' + 'words about the data ' * 60)
    fake.script('Six messages about the data.')
    assert e.compact().startswith('compacted'), e.compactor.note
    eq((e._sum_be.spec.name, ledger_input(e.task, e.usage.input)), ('fake-small', e.usage.input))
    assert e.usage.input > u.input
    # switch keeps the conversation and the usage so far; reset forgets the conversation
    u = e.usage.total
    e.switch(fspec)
    eq(e.spec.name, 'fake')
    assert e.history and e.usage.total == u
    fake.script('still with you')
    eq(e.ask('are you there?'), 'still with you')
    e.reset()
    eq((e.history, SessionFile(task_dir(e.task)/'session.jsonl').load()), ([], []))


def test_missing_summary_model_compacts_surgically(fake, small, gw, agents):
    "A summary model that does not exist is reported as a problem, and the compaction is surgical."
    d = long_conversation(agents, fake, small, gw)
    g = agents(small, base_url=gw.url, summariser='no-such-model')
    g.backend.start(); g.backend.hist = d.history[-4:] + [{'role': 'user', 'content': 'more ' * 900}, {'role': 'assistant', 'content': 'ok'}]
    assert g.compact().startswith('compacted') and 'surgical' in g.compactor.note, g.compactor.note
    assert any('summary model unavailable' in p for p in g.backend.problems)
