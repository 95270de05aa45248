"""FakeLlamaServer, the llama-server double ([04a_llama_double](../nbs/04a_llama_double.ipynb)), as its clients meet it.

Two groups, each needing the whole server: prompt progress, slot readback and cancellation (slow prompt reads, parallel
slots, SSE pings, stopping with a client waiting, a queued request dropped), and what a client (the official `openai`
SDK, httpx) sees of each fault in the notebook's fault table. Every server listens on 127.0.0.1; the fault tests share
one, as the notebook's examples did.
"""
import json, struct, threading, time
import httpx, openai, pytest
from openai import OpenAI
from fastcore.test import test_eq as eq, test_fail as must_fail   # renamed: pytest would collect a test_* name as a test
from ramabana.llama_double import FakeLlamaServer, Reply, assemble, render_prompt, token_id, tool_call, toy_tokenize
from ramabana.testing import wait_until

user = [{'role': 'user', 'content': 'What is 2+2?'}]
tools = [{'type': 'function', 'function': {'name': 'add', 'description': 'Add two numbers',
          'parameters': {'type': 'object', 'properties': {'a': {'type': 'number'}, 'b': {'type': 'number'}}}}}]
call = Reply(tool_calls=[tool_call('add', {'a': 2, 'b': 2})])

def f32(x:float) -> float:
    "`x` through float32, as llama.cpp stores a sampling field."
    return struct.unpack('f', struct.pack('f', x))[0]

def sse_lines(resp) -> list:
    "The `data:` payloads of a streamed response, JSON parsed where possible."
    out = []
    for line in resp.iter_lines():
        if not line.startswith('data: '): continue
        d = line[6:]
        try: out.append(json.loads(d))
        except ValueError: out.append(d)
    return out

def chat_body(messages, **kw): return dict(model='m', messages=messages, stream=True, stream_options={'include_usage': True}, **kw)

# a prompt of several batches, with sampling fields to see in `/slots`
body = chat_body([{'role': 'user', 'content': 'Summarise: ' + 'the cat sat on the mat. ' * 6}],
                 return_progress=True, temperature=0.7, top_k=20, max_tokens=50)

# ---- progress, slot readback and cancellation

def test_progress_and_slot_readback():
    "Progress comes at once, then one per batch; `/slots` shows the busy and then idle slot's params; an overflow overwrites them."
    with FakeLlamaServer(n_batch=16) as sp:
        sp.fail('slow_prefill', delay=0.1)
        with httpx.stream('POST', sp.url+'/v1/chat/completions', json=body) as resp:
            busy = httpx.get(sp.url+'/slots').json()[0]
            ev = sse_lines(resp)
        eq(busy['is_processing'], True)
        eq((busy['params']['temperature'], busy['params']['top_k'], busy['params']['n_predict']), (0.699999988079071, 20, 50))
        prog = [e['prompt_progress'] for e in ev if isinstance(e, dict) and 'prompt_progress' in e]
        total = ev[-2]['usage']['prompt_tokens']
        eq(total, len(toy_tokenize(render_prompt(sp.template, body['messages']))))   # what the cancellation test reads against
        eq([p['processed'] for p in prog], [min(16*i, total) for i in range(len(prog))])
        eq(prog[0]['time_ms'], 0)
        eq((prog[-1]['total'], prog[-1]['cache']), (total, 0))
        eq(ev[0]['choices'][0]['delta'], {'role': 'assistant', 'content': None})
        idle = httpx.get(sp.url+'/slots').json()[0]
        eq((idle['is_processing'], idle['params']['top_k'], idle['params']['n_predict']), (False, 20, 50))
        r = httpx.post(sp.url+'/v1/chat/completions', json=dict(messages=[{'role': 'user', 'content': 'word ' * 9000}], seed=77))
        eq((r.status_code, httpx.get(sp.url+'/slots').json()[0]['params']['seed']), (400, 77))

def test_client_leaves_during_the_prompt_read():
    "A client that leaves while the prompt is read: the request is stopped (`cancelled`), the slot freed, what was read cached."
    with FakeLlamaServer(n_batch=8) as sp:
        total = len(toy_tokenize(render_prompt(sp.template, body['messages'])))   # the prompt's tokens
        sp.fail('slow_prefill', delay=0.2)
        with httpx.stream('POST', sp.url+'/v1/chat/completions', json=body) as resp:
            events = (json.loads(l[6:]) for l in resp.iter_lines() if l.startswith('data: '))
            seen = [next(events)['prompt_progress']['processed'], next(events)['prompt_progress']['processed']]
        eq(seen, [0, 8])   # the first is sent before any work; the client leaves after one batch
        wait_until(lambda: sp.cancelled == 1 and not sp.slots[0].busy)
        assert 8 <= len(sp.slots[0].tokens) < total

def test_slots_in_parallel():
    "Two requests in flight take the two slots, each showing its own params; `id_slot` pins a request to a slot."
    with FakeLlamaServer(n_slots=2, n_batch=4) as sp, httpx.Client() as h1, httpx.Client() as h2:
        sp.fail('slow_prefill', times=2, delay=0.1)
        with h1.stream('POST', sp.url+'/v1/chat/completions', json=dict(body, temperature=0.1)) as a, \
             h2.stream('POST', sp.url+'/v1/chat/completions', json=dict(body, temperature=0.2)) as b:
            both = httpx.get(sp.url+'/slots').json()
            a.read(); b.read()
        eq(sorted(s['params']['temperature'] for s in both), [f32(0.1), f32(0.2)])
        s0 = list(sp.slots[0].tokens)
        httpx.post(sp.url+'/v1/chat/completions', json=dict(messages=user, id_slot=1))
        pt = [token_id(p) for p in toy_tokenize(render_prompt(sp.template, user))]
        eq((sp.slots[0].tokens, sp.slots[1].tokens[:len(pt)]), (s0, pt))

def test_sse_pings_during_a_silent_read():
    "A long prompt read without `return_progress` is interspersed with SSE comments every `sse_ping_interval`."
    with FakeLlamaServer(n_batch=8) as sp:
        sp.fail('slow_prefill', delay=0.05).script('ok')
        with httpx.stream('POST', sp.url+'/v1/chat/completions', json=chat_body(body['messages'], sse_ping_interval=0.01)) as resp:
            lines = [l for l in resp.iter_lines() if l]
        assert lines[0] == ':' and lines.count(':') >= 2
        eq(lines[lines.count(':')], 'data: ' + json.dumps(json.loads(lines[lines.count(':')][6:]), separators=(',', ':')))

def test_stop_while_a_client_waits():
    "Stopping a server while a client waits on a slow stream takes under 10 s, closes the connection, and ends the thread."
    th0 = threading.active_count()
    sp = FakeLlamaServer(n_batch=1).start()
    sp.fail('slow_prefill', delay=1.0)
    with httpx.Client() as hc, hc.stream('POST', sp.url+'/v1/chat/completions', json=body) as resp:
        t0 = time.monotonic()
        sp.stop()
        assert time.monotonic() - t0 < 10
        must_fail(lambda: list(resp.iter_lines()), exc=httpx.RemoteProtocolError)
    eq(threading.active_count(), th0)

def test_queued_request_dropped_when_its_client_leaves():
    "A request whose client leaves while it waits for the busy slot is dropped: it takes no scripted answer from the next."
    sp = FakeLlamaServer(n_batch=1).start()   # one slot
    try:
        ask = {'model': 'm', 'messages': [{'role': 'user', 'content': 'hello there'}]}
        sp.fail('slow_prefill', delay=0.5)
        with httpx.Client(timeout=30) as hc:
            with hc.stream('POST', sp.url+'/v1/chat/completions', json={**ask, 'stream': True}):   # holds the slot, reading slowly
                must_fail(lambda: hc.post(sp.url+'/v1/chat/completions', json=ask, timeout=0.3), exc=httpx.ReadTimeout)   # waits, gives up
                wait_until(lambda: sp.queued == 0)   # dropped while the slot is still busy
                sp.script('for the next request')
            eq(hc.post(sp.url+'/v1/chat/completions', json=ask).json()['choices'][0]['message']['content'], 'for the next request')
    finally: sp.stop()

# ---- what a client sees of each fault

@pytest.fixture(scope='module')
def srv():
    "The faults' server, two slots, as the notebook's `srv`."
    s = FakeLlamaServer(n_ctx=4096, n_slots=2).start()
    try: yield s
    finally: s.stop()

@pytest.fixture(scope='module')
def oai(srv): return OpenAI(base_url=srv.url+'/v1', api_key='none', max_retries=0)

def read_all(oai): return list(oai.chat.completions.create(model='m', messages=user, stream=True))

def test_cut(srv, oai):
    "`cut`: no finish reason and no usage, and the SDK raises nothing; `abrupt=True`: `APIConnectionError`."
    srv.script('one two three four five')
    srv.fail('cut')
    chunks = list(oai.chat.completions.create(model='m', messages=user, stream=True))
    eq([ch.choices[0].finish_reason for ch in chunks], [None]*4)
    assert all(ch.usage is None for ch in chunks)
    srv.fail('cut', abrupt=True)
    try: read_all(oai); raise AssertionError('no error')
    except openai.APIConnectionError as e: assert 'peer closed connection without sending complete message body' in str(e.__cause__)

def test_stream_error(srv, oai):
    "`stream_error`: the SDK raises `APIError` with the event's message."
    srv.fail('stream_error', message='slot crashed')
    must_fail(lambda: read_all(oai), exc=openai.APIError, contains='slot crashed')

def test_reset(srv, oai):
    "`reset`: a connection error, which the SDK's own retry gets past; httpx on a kept-alive connection raises."
    n0 = len(srv.requests)
    srv.fail('reset')
    must_fail(lambda: oai.chat.completions.create(model='m', messages=user), exc=openai.APIConnectionError)
    srv.fail('reset')
    retrying = OpenAI(base_url=srv.url+'/v1', api_key='none', max_retries=1)
    eq(retrying.chat.completions.create(model='m', messages=user).choices[0].message.content, 'You said: What is 2+2?')
    eq(len(srv.requests) - n0, 3)
    with httpx.Client() as hc:  # on a kept-alive connection, with httpx
        eq(hc.get(srv.url+'/health').status_code, 200)
        srv.fail('reset')
        must_fail(lambda: hc.post(srv.url+'/v1/chat/completions', json=dict(messages=user)), exc=httpx.RemoteProtocolError,
                  contains='without sending a response')

def test_tool_parse_500(srv, oai):
    "`tool_parse_500`: llama-server's 500; `times=2` fails two requests and the third gets through."
    srv.fail('tool_parse_500')
    must_fail(lambda: oai.chat.completions.create(model='m', messages=user), exc=openai.InternalServerError,
              contains='Failed to parse tool call arguments as JSON')
    srv.fail('tool_parse_500', times=2)
    r = httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user))
    eq((r.status_code, r.json()['error']['type']), (500, 'server_error'))
    eq(httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user)).status_code, 500)
    eq(httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user)).status_code, 200)

def test_not_json(srv, oai):
    "`not_json`: a 200 whose body, or stream line, is not JSON."
    srv.fail('not_json')
    r = httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user))
    eq(r.status_code, 200)
    must_fail(r.json, exc=json.JSONDecodeError)
    srv.fail('not_json')
    must_fail(lambda: read_all(oai), exc=json.JSONDecodeError)

def test_no_choices(srv, oai):
    "`no_choices`: the SDK does not validate, so `choices` is simply missing; streamed, only the usage chunk has them."
    srv.fail('no_choices')
    r = oai.chat.completions.create(model='m', messages=user)
    eq(getattr(r, 'choices', None), None)
    eq(r.usage.prompt_tokens > 0, True)
    srv.fail('no_choices')
    with httpx.stream('POST', srv.url+'/v1/chat/completions', json=chat_body(user)) as resp: ev = sse_lines(resp)
    eq(['choices' in e for e in ev[:-1]], [False]*(len(ev)-2) + [True])  # only the usage chunk has them (empty)

def test_bad_tool_call():
    "`bad_tool_call`: a made-up `lookup` call without id, type and arguments; or the script's call without the fields in `missing`."
    with FakeLlamaServer(tools=True) as st:
        cl = OpenAI(base_url=st.url+'/v1', api_key='none', max_retries=0)
        st.fail('bad_tool_call')
        tc = cl.chat.completions.create(model='m', messages=user, tools=tools).choices[0].message.tool_calls[0]
        eq((tc.id, tc.type, tc.function.name, getattr(tc.function, 'arguments', None)), (None, None, 'lookup', None))
        st.script(call).fail('bad_tool_call', missing=['id'])
        d = [ch.choices[0].delta.model_dump(exclude_none=True) for ch in cl.chat.completions.create(model='m', messages=user, tools=tools, stream=True) if ch.choices]
        eq(assemble(d)['tool_calls'], [{'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 2, "b": 2}'}}])

def test_rate_limited_unavailable_overloaded(srv, oai):
    "429, 503 and 529 with `Retry-After` on the exception's response; `retry_after=None` leaves the header out."
    for mode,exc,status in [('rate_limited', openai.RateLimitError, 429), ('unavailable', openai.InternalServerError, 503),
                            ('overloaded', openai.APIStatusError, 529)]:
        srv.fail(mode, retry_after=7)
        try: oai.chat.completions.create(model='m', messages=user); raise AssertionError('no error')
        except exc as e: eq((e.status_code, e.response.headers['retry-after']), (status, '7'))
    srv.fail('rate_limited', retry_after=None)
    r = httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user))
    eq((r.status_code, 'retry-after' in r.headers, r.json()['error']['type']), (429, False, 'rate_limit_error'))

def test_bad_schema(srv, oai):
    "`bad_schema`: a `json_schema` request refused with the real server's 400 (or old builds' 500); one without a schema is answered."
    schema_req = dict(messages=user, response_format={'type': 'json_schema', 'json_schema': {'name': 'r', 'schema': {'$ref': 'https://example.com/s.json'}}})
    srv.fail('bad_schema')
    eq(httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user)).status_code, 200)   # no schema: not refused
    r = httpx.post(srv.url+'/v1/chat/completions', json=schema_req)
    eq((r.status_code, r.json()['error']['type']), (400, 'invalid_request_error'))
    assert r.json()['error']['message'].startswith('Unable to generate parser for this template. Automatic parser generation failed: JSON schema error at #')
    srv.fail('bad_schema', status=500)
    must_fail(lambda: oai.chat.completions.create(model='m', **schema_req), exc=openai.InternalServerError, contains='JSON schema conversion failed')
    eq(httpx.post(srv.url+'/v1/chat/completions', json=schema_req).status_code, 200)   # one request only

def test_faults_in_order(srv):
    "Faults apply in the order they were asked for, one request each; an unknown mode is refused."
    srv.fail('rate_limited').fail('unavailable')
    eq([httpx.post(srv.url+'/v1/chat/completions', json=dict(messages=user)).status_code for _ in range(3)], [429, 503, 200])
    must_fail(lambda: srv.fail('explode'), contains="unknown fault 'explode'")
