"""`GatewayBackend` end to end: turns through a real in-process gateway (`start_gateway`, 127.0.0.1) to `FakeLlamaServer`,
the Anthropic and Gemini doubles, and the real OpenAI SDK.

08_backend shows a reader a turn, a sampling profile, a price, the loop guard, windows, the tool loop, forced steps,
made-up calls, recited blocks and the thinking filters; this file drives the failure paths: broken streams, failures
as one sentence each (from the gateway, the providers' doubles and the SDK), Claude's thinking budget, cancels (a slow
prompt, before the headers, between calls, mid-answer), a conversation and a turn past their window, and `max_tokens`.
Each test has its own double, gateway and ledger; every wait is bounded.
"""
import dataclasses, re, threading, time
import pytest
from fastcore.test import test_eq as eq   # renamed: pytest would collect `test_*` names as tests
from ramabana.core import ModelSpec, get
from ramabana.backend import make_backend, CANCELLED_CALL, FAILED_CALL
from ramabana.magic import agent_config
from ramabana.conversation import apply_piece, Discard
from ramabana.callerrors import explain_error, Unreachable, CallFailed, NotAuthorised
from ramabana.llama_double import Reply, tool_call
from ramabana.hosted_doubles import FakeAnthropic, HostedFault as Fault
from ramabana.app import start_gateway
from ramabana.ledger import Ledger


def add(a:int, b:int) -> int:
    "Add two numbers."
    return a + b
def dump(): return 'line\n' * 5000


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    "The notebook's settings: private task and data directories, and no config file of the user's."
    monkeypatch.setenv('RAMABANA_TASK_DIR', str(tmp_path/'tasks'))
    monkeypatch.setenv('RAMABANA_DATA_DIR', str(tmp_path/'data'))
    monkeypatch.setenv('RAMABANA_CONFIG', str(tmp_path/'config.toml'))   # not there: the defaults
    monkeypatch.delenv('RAMABANA_EFFORT', raising=False)

@pytest.fixture
def mk(fspec, gw): return lambda **kw: make_backend(fspec, base_url=gw.url, **kw)

@pytest.fixture
def hosted(tmp_path, fspec):
    "The Anthropic double as `claude-x`, a model whose server is gone, and `fake`, behind a gateway of their own that retries quickly."
    fa = FakeAnthropic().start()
    gone = ModelSpec('gone', 'llamacpp', ctx=8192, base_url='http://127.0.0.1:9/v1')
    claude = ModelSpec('claude-x', 'anthropic', model_id='claude-sonnet-4-5', base_url=fa.url, api_key_env='RAMABANA_TEST_KEY', ctx=200_000)
    egw = start_gateway(models={m.name: m for m in (gone, claude, fspec)}, ledger=Ledger(f'{tmp_path}/ledger-e.db'), retry_base=0.01)
    yield fa, gone, claude, egw
    egw.stop(); fa.stop()


def test_broken_stream(fake, fspec, gw, mk):
    "A broken stream: a llama-server continues the text it had sent, so the answer arrives whole and once; a server that cannot continue has the text taken back and sent again."
    fake.fail('cut')
    be = mk()
    pieces = list(be.stream('tell me something'))
    assert not any(isinstance(p, Discard) for p in pieces), pieces
    eq(''.join(pieces), 'You said: tell me something')
    gw.gateway.extra_models['plain'] = pspec = ModelSpec('plain', 'openai_compatible', ctx=8192, base_url=fake.url + '/v1')
    fake.fail('cut')
    pieces = list(make_backend(pspec, base_url=gw.url).stream('tell me something'))
    assert any(isinstance(p, Discard) for p in pieces), pieces
    text = ''
    for p in pieces: text = apply_piece(text, p)
    eq(text, 'You said: tell me something')
    eq(be.send('again'), 'You said: again')


def test_failures_become_text(fake, fspec, gw, mk):
    "A model the gateway does not know and an unreachable gateway end the turn as text, with `turn_error` saying why."
    bad = make_backend(ModelSpec('nobody', 'llamacpp', base_url='http://127.0.0.1:9/v1'), base_url=gw.url)
    out = bad.send('hi')
    assert out.startswith('[error:') and 'nobody' in bad.turn_error, out
    down = make_backend(fspec, base_url='http://127.0.0.1:9/v1')
    eq(down.send('hi'), f'[error: {down.turn_error}]')
    eq(down.turn_error, 'the gateway at http://127.0.0.1:9/v1 is not reachable; is it running? (`ramabana serve` starts one; the gateway.url setting names it)')
    eq(down.hist, [])


def test_gateway_failures_read_as_sentences(fake, fspec, gw, hosted, monkeypatch, tmp_path):
    "Each failure the gateway reports (an unreachable server, a prompt too long, rate limits, refused or missing keys, a stream error, a gateway token) reads as one sentence with what to do."
    fa, gone, claude, egw = hosted
    def fails(spec, msg='hi', **kw):
        "The turn error of one turn that fails, checking the turn's text ends with that error."
        be = make_backend(spec, base_url=egw.url, **kw)
        out = be.send(msg)
        assert out.endswith(f'[error: {be.turn_error}]'), out
        return be.turn_error
    eq(fails(gone), 'the model server at http://127.0.0.1:9/v1 is not reachable; is it running? (`ramabana setup` builds the local one)')
    fake.slots[0].n_ctx = 20
    err = fails(fspec, 'a question of a few words', sp='You answer briefly and well.')
    fake.slots[0].n_ctx = 8192
    assert re.fullmatch(r"the prompt \(\d+ tokens\) is longer than fake's 20-token window; shorten it, or compact the conversation", err), err
    monkeypatch.setenv('RAMABANA_TEST_KEY', 'test-key')
    fa.push(Fault('rate_limited', retry_after=200), Fault('overloaded', retry_after=300))
    eq(fails(claude), 'rate limited by anthropic; retry in 200 s')
    eq(fails(claude), 'anthropic is overloaded (Overloaded); retry in 300 s')
    monkeypatch.setenv('RAMABANA_TEST_KEY', 'sk-ant-not-the-right-key-0123456789')
    err = fails(claude)
    assert err.startswith('anthropic refused the API key in RAMABANA_TEST_KEY (') and 'not-the-right' not in err, err
    from ramabana.hosted_doubles import FakeGemini
    fg = FakeGemini().start()   # Gemini refuses a wrong key with a 400 "API key not valid", not a 401
    gem = ModelSpec('gem-x', 'gemini', model_id='gemini-2.5-flash', base_url=fg.url, api_key_env='RAMABANA_TEST_KEY', ctx=1_000_000)
    egw.gateway.extra_models[gem.name] = gem
    err = fails(gem)
    assert err.startswith('gemini refused the API key in RAMABANA_TEST_KEY (API key not valid') and 'not-the-right' not in err, err
    fg.stop()
    monkeypatch.delenv('RAMABANA_TEST_KEY')
    eq(fails(claude), 'RAMABANA_TEST_KEY is not set; claude-x needs it')
    fake.fail('stream_error', message='the model crashed')
    eq(fails(fspec), 'fake failed: the model crashed')
    eq(type(explain_error(ValueError('x'), fspec)), ValueError)   # not the SDK's: left alone
    tgw = start_gateway(models={'fake': fspec}, ledger=Ledger(f'{tmp_path}/ledger-t.db'), token='gateway-secret-0123')
    tb = make_backend(fspec, base_url=tgw.url)
    tb.send('hi')
    eq(tb.turn_error, f"the gateway at {tgw.url} needs its token: set {get('gateway.token_env')}")
    eq(make_backend(fspec, base_url=tgw.url, api_key='gateway-secret-0123').send('hi').startswith('[error'), False)
    tgw.stop()


def test_claude_thinking_effort(fspec, hosted, monkeypatch):
    fa, gone, claude, egw = hosted
    "A Claude reasoning model is asked for `CLAUDE_EFFORT` (a thinking budget) unless the `effort` setting or `effort=` names another; a model that does not reason is asked for none."
    monkeypatch.setenv('RAMABANA_TEST_KEY', 'test-key')
    thinker = dataclasses.replace(claude, name='claude-r', reasoning=True)
    egw.gateway.extra_models['claude-r'] = thinker
    def sent_thinking(spec, **kw):
        "The `thinking` Anthropic received for one turn to `spec`."
        be = make_backend(spec, base_url=egw.url, max_tokens=30_000, **kw)
        assert not be.send('hi').startswith('[error'), be.turn_error
        return fa.requests[-1].json.get('thinking')
    eq(sent_thinking(thinker), {'type': 'enabled', 'budget_tokens': 24576})
    with monkeypatch.context() as m:   # the setting reaches the backend through the magic's `agent_config`
        m.setenv('RAMABANA_EFFORT', 'low')
        eq(sent_thinking(thinker, effort=agent_config().effort), {'type': 'enabled', 'budget_tokens': 2048})
    eq(sent_thinking(thinker, effort='none'), None)   # thinking off
    eq(sent_thinking(claude), None)
    eq((make_backend(fspec).effort, make_backend(thinker).effort), (None, 'high'))
    monkeypatch.delenv('RAMABANA_TEST_KEY')


def test_sdk_errors_explained(hosted):
    fa, gone, claude, egw = hosted   # claude: the spec a provider refuses
    "What the doubles cannot easily produce, as the SDK raises it: a managed llama-server that cannot start, a timeout, a provider refusing a model."
    import httpx, openai
    def sdk_error(status, message, code):
        "The SDK's exception for an error response of the gateway."
        resp = httpx.Response(status, request=httpx.Request('POST', 'http://127.0.0.1:1/v1/chat/completions'))
        return client_err(status)(f'Error code: {status}', response=resp, body={'message': message, 'code': code})
    client_err = {503: openai.InternalServerError, 403: openai.PermissionDeniedError}.get
    managed = ModelSpec('local', 'llamacpp', ctx=8192)
    x = explain_error(sdk_error(503, 'the managed llama-server is not available: llama-server is not built', 'upstream_unavailable'), managed)
    eq((type(x), str(x)), (Unreachable, 'the local llama-server for local could not start: llama-server is not built (`ramabana setup` builds it)'))
    x = explain_error(openai.APITimeoutError(request=httpx.Request('POST', 'http://g/v1')), managed, 'http://g/v1', 600)
    assert type(x) is CallFailed and str(x).startswith('no answer from local within 600 s (the gateway at http://g/v1)'), x
    x = explain_error(sdk_error(403, 'upstream 403: not allowed', 'permission_denied'), claude)
    eq((type(x), str(x)), (NotAuthorised, 'anthropic refused access to claude-sonnet-4-5 (not allowed)'))


def test_cancel_a_slow_stream(fake, fspec, gw, mk):
    "`cancel` from another thread while the double reads a long prompt ends the turn at once, and nothing is retried."
    fake.fail('slow_prefill', delay=5.0)
    be = mk()
    out = []
    th = threading.Thread(target=lambda: out.append(be.send('x ' * 6000)), daemon=True)
    th.start()
    for _ in range(500):
        if be._resp is not None: break
        time.sleep(0.01)
    t0 = time.monotonic(); be.cancel(); th.join(10)
    assert not th.is_alive() and time.monotonic() - t0 < 2, time.monotonic() - t0
    eq(out, [''])


def test_cancel_before_the_headers(fake, fspec, gw, mk):
    "Without progress events `cancel` wakes the request still waiting for its headers; the backend answers the next turn."
    fake.fail('slow_prefill', delay=5.0)
    be = mk(progress=False)
    out = []
    th = threading.Thread(target=lambda: out.append(be.send('x ' * 6000)), daemon=True)
    th.start()
    for _ in range(500):
        if be._inflight: break
        time.sleep(0.01)
    time.sleep(0.1); t0 = time.monotonic(); be.cancel(); th.join(10)
    assert not th.is_alive() and time.monotonic() - t0 < 2, time.monotonic() - t0
    eq((out, be.turn_error), ([''], ''))
    fake.script('back again')
    eq(be.send('hello?'), 'back again')


def test_overflow_recovered_by_trimming(fake, small, gw):
    "A conversation past its window is recovered once by trimming the old tool results (spilled to files), and the turn goes on."
    be = make_backend(small, base_url=gw.url, task='overflow')
    be.start()
    be.hist = [{'role': 'user', 'content': 'read it'}, {'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'c', 'type': 'function', 'function': {'name': 'dump', 'arguments': '{}'}}]},
               {'role': 'tool', 'tool_call_id': 'c', 'content': 'row ' * 3000}, {'role': 'assistant', 'content': 'read'}]
    saved_ctx = fake.n_ctx
    fake.slots[0].n_ctx = 2048
    fake.script('still here')
    eq(be.send('and now?'), 'still here')
    assert 'full text at' in be.hist[2]['content']
    fake.slots[0].n_ctx = saved_ctx


def test_overflow_within_a_turn(fake, small, gw):
    "A tool result larger than what the window has left: the backend trims and tries again, and the turn's usage adds up every call in the ledger."
    saved_ctx = fake.n_ctx
    def task_rows(task, n, timeout=10):
        "The ledger's rows of `task` (newest first), once there are `n`."
        end = time.monotonic() + timeout
        while True:
            gw.gateway.ledger.flush()
            if len(rows := gw.gateway.ledger.recent(50, task=task)) >= n or time.monotonic() > end: return rows
            time.sleep(0.02)
    fake.slots[0].n_ctx = 2048
    fake.script(Reply('Reading.', tool_calls=[tool_call('dump')]), 'Read it.')
    be = make_backend(small, base_url=gw.url, tools=[dump], task='overflow-tool', tool_max_len=0)
    eq(be.send('read the dump'), 'Reading.\n\nRead it.')
    rows = task_rows('overflow-tool', 3)
    eq([r['status'] for r in rows], [200, 400, 200])
    eq((be.usage.turns, be.usage.input, be.usage.output, be.steps),
            (1, sum(r['prompt_tokens'] or 0 for r in rows), sum(r['completion_tokens'] or 0 for r in rows), 2))
    fake.slots[0].n_ctx = saved_ctx


def test_cancel_between_calls(fake, fspec, gw, mk):
    "A cancel while one answer's calls run gives the calls not yet run `CANCELLED_CALL`; a failed approval gives each `FAILED_CALL`."
    def halt(): "Stop the turn."; hb.cancel(); return 'stopping'
    fake.script(Reply('Two calls.', tool_calls=[tool_call('halt'), tool_call('add', {'a': 1, 'b': 2})]))
    hb = mk(tools=[halt, add])
    eq(hb.send('go'), 'Two calls.')
    eq([(m['role'], m['content']) for m in hb.hist[2:]], [('tool', 'stopping'), ('tool', CANCELLED_CALL)])
    eq([m['tool_call_id'] for m in hb.hist[2:]], [t['id'] for t in hb.hist[1]['tool_calls']])
    fake.script('Fine.')
    eq(hb.send('what happened?'), 'Fine.')
    def approve(tool, args): raise RuntimeError('the terminal went away')   # asking the user failed
    fake.script(Reply('Two calls.', tool_calls=[tool_call('add', {'a': 1, 'b': 2}), tool_call('add', {'a': 3, 'b': 4})]))
    hb = mk(tools=[add], approve=approve)
    eq(hb.send('go'), 'Two calls.\n[error: RuntimeError: the terminal went away]')
    eq([(m['role'], m['content']) for m in hb.hist[2:]], [('tool', FAILED_CALL), ('tool', FAILED_CALL)])


def test_cancel_mid_answer(fake, fspec, gw, mk):
    "A cancel mid-answer keeps the part of the answer the user saw, and the next turn goes on from it."
    fake.script('Once upon a time there was a dragon who liked long stories very much.')
    be = mk()
    g = be.stream('tell me a story')
    first = next(g)
    be.cancel(); g.close()
    eq(be.hist, [{'role': 'user', 'content': 'tell me a story'}, {'role': 'assistant', 'content': first}])
    fake.script('As I was saying.')
    eq(be.send('go on'), 'As I was saying.')
    eq([m['role'] for m in fake.last.json['messages']], ['user', 'assistant', 'user'])


def test_max_tokens(fake, fspec, gw, mk):
    "`max_tokens` caps every reply."
    fake.script('a long story ' * 50)
    be = mk(max_tokens=12)
    be.send('tell me a story')
    eq(fake.last.json['max_tokens'], 12)
