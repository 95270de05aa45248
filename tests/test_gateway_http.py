"""The gateway over HTTP: each row of the failure table, and its features, as a client meets them.

The gateway ([05h_gateway](../nbs/05h_gateway.ipynb)) runs as it does for a client: served by `GatewayServer` on
127.0.0.1 and called with the official `openai` SDK, with `FakeLlamaServer` (a llama-server double with switchable
faults) as the model's server and the function model `echo` beside it. After each call the ledger's newest row says
what happened. The tests share one gateway and one double, in file order, as the notebook's examples did; the last
checks that every call left exactly one row.
"""
import asyncio, datetime, io, json, logging, os, threading, time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import TestCase
import httpx, openai, pytest
from fastcore.test import test_eq as eq, test_fail as must_fail   # renamed: pytest would collect a test_* name as a test
from ramabana.core import ModelSpec
from ramabana.chat import chunk, has_output
from ramabana.errors import log, redact
from ramabana.upstream import FunctionUpstream, aiter_sse, register_upstream
from ramabana.ledger import Ledger
from ramabana.gateway import Gateway
from ramabana.app import GatewayServer, SETTINGS_FILE
from ramabana.llama_double import FakeLlamaServer, Reply, Slot, toy_tokenize
from ramabana.hosted_doubles import FakeOpenAI
from ramabana.testing import BackgroundServer
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

register_upstream('function', FunctionUpstream)   # the `echo` and `spy` models answer in-process
assertLogs = TestCase().assertLogs
hi = [{'role': 'user', 'content': 'hi'}]

def text_of(chunks):
    "The streamed text, honouring discard events."
    out = []
    for c in chunks:
        if (c.model_extra or {}).get('ramabana', {}).get('discard'): out.clear()
        elif c.choices and c.choices[0].delta.content: out.append(c.choices[0].delta.content)
    return ''.join(out)

def fails(f, exc):
    "The `exc` that `f()` raises (an AssertionError when it raises none)."
    try: f()
    except exc as e: return e
    raise AssertionError(f'expected {exc.__name__}')

class Site:
    "One gateway on 127.0.0.1 in front of `fake` (the model `local`) and `echo`, its ledger, and clients for it."
    def __init__(self, tmp:Path):
        self.tmp, self.led = tmp, Ledger(tmp/'ledger.sqlite')
        self.fake = FakeLlamaServer(tools=True, reasoning=True, n_ctx=4096, n_batch=16).start()
        self.local = ModelSpec('local', 'llamacpp', base_url=self.fake.url, ctx=4096)
        echo = ModelSpec('echo', 'function', ctx=4096)
        # every fault here meets a closed circuit (the circuits are the notebook's scripted examples' subject)
        self.gw = Gateway(ledger=self.led, retry_base=0.005, breaker_failures=10**6, models={'local': self.local, 'echo': echo},
                          config_file=SETTINGS_FILE)   # config.toml as the settings name it, read live (the tests edit it)
        self.srv = GatewayServer(self.gw).start()
        self.oai = openai.OpenAI(base_url=self.srv.url, api_key='unused', max_retries=0)
        self.hc = httpx.Client(base_url=self.srv.url, timeout=30)   # the gateway's own endpoints

    def ask(self, stream=False, messages=hi, **kw):
        "One call to `local` with the SDK: the answer, or its chunks."
        r = self.oai.chat.completions.create(model='local', messages=messages, stream=stream, **kw)
        return list(r) if stream else r

    def row(self) -> dict:
        "The ledger's newest row."
        self.led.flush()
        return self.led.recent(1)[0]

    def last_call(self, model) -> dict:
        "The newest row for `model`, read over `GET /v1/calls`."
        return httpx.get(self.srv.url + '/calls', params={'limit': 1, 'model': model}, timeout=60).json()['data'][0]

    def stop(self):
        self.srv.stop(); self.fake.stop(); self.hc.close(); self.led.close()

@pytest.fixture(scope='module')
def site(tmp_path_factory):
    s = Site(tmp_path_factory.mktemp('gateway-http'))
    os.environ['RAMABANA_TASK_DIR'] = str(s.tmp/'tasks')
    try: yield s
    finally:
        os.environ.pop('RAMABANA_TASK_DIR', None)
        s.stop()

# ---- the failure table, over HTTP

def test_retired_model(site):
    "A retired model alone is a 404 naming its successor; with fallbacks they answer; a retirement still to come changes nothing."
    gw, oai, row = site.gw, site.oai, site.row
    fk = FakeLlamaServer().start()   # its own server: the fault tests count what reaches `fake`
    try:
        gw.extra_models['new'] = ModelSpec('new', 'llamacpp', base_url=fk.url, ctx=4096)
        day = lambda n: (datetime.date.today() + datetime.timedelta(days=n)).isoformat()
        gw.extra_models['old'] = ModelSpec('old', 'llamacpp', base_url=fk.url, ctx=4096, retired=day(-1), successor='new')
        e = fails(lambda: oai.chat.completions.create(model='old', messages=hi), openai.NotFoundError)
        eq(e.body['code'], 'model_retired')
        assert e.body['message'].startswith(f"model 'old' was retired on {day(-1)}: its provider no longer serves it; ask for new"), e.body
        gw.extra_models['old2'] = ModelSpec('old2', 'llamacpp', base_url=fk.url, ctx=4096, retired=day(0), fallbacks=('new',))
        fk.script('from the fallback')
        eq(oai.chat.completions.create(model='old2', messages=hi).choices[0].message.content, 'from the fallback')
        eq((row()['info']['skipped'], row()['info']['fallback']), ([{'model': 'old2', 'reason': 'retired'}], 'new'))
        gw.extra_models['soon'] = ModelSpec('soon', 'llamacpp', base_url=fk.url, ctx=4096, retired=day(1), successor='new')
        fk.script('still served')
        eq(oai.chat.completions.create(model='soon', messages=hi).choices[0].message.content, 'still served')
    finally:
        for m in ('old', 'old2', 'soon', 'new'): gw.extra_models.pop(m, None)
        fk.stop()

def test_broken_stream(site):
    "A stream cut with no finish reason is continued with the text so far as a prefill; two breaks in a row are a 502."
    fake, ask, row = site.fake, site.ask, site.row
    fake.fail('cut', after=3)
    chunks = ask(stream=True)
    assert not any((c.model_extra or {}).get('ramabana') for c in chunks)
    eq(text_of(chunks), 'You said: hi')
    x = row(); eq((x['status'], x['retried'], x['retries'][0]['reason']), (200, 1, 'broken_stream'))
    assert 0 < x['info']['continued'] < len('You said: hi')
    eq(fake.last.json['messages'][-1]['role'], 'assistant')
    fake.fail('cut', times=2, after=3, abrupt=True)
    e = fails(lambda: ask(), openai.APIStatusError)
    eq((e.status_code, e.code), (502, 'broken_stream'))
    x = row(); eq((x['status'], x['error'], x['retried']), (502, 'broken_stream', 1))

def test_error_event_in_a_stream(site):
    "An error event before any content is the client's status; after content, an error event and no `[DONE]`."
    fake, ask, row = site.fake, site.ask, site.row
    fake.fail('stream_error', after=0, message='slot crashed')
    e = fails(lambda: ask(stream=True), openai.APIStatusError)
    eq(e.status_code, 500); assert 'slot crashed' in e.message
    x = row(); eq((x['status'], x['retried']), (500, 0))
    fake.fail('stream_error', after=3, message='slot crashed')
    e = fails(lambda: ask(stream=True), openai.APIError)
    assert 'slot crashed' in e.message
    eq(row()['status'], 500)

def test_dropped_connection(site):
    "A kept-alive connection closed as the request arrives: sent again at once, with the same `Idempotency-Key`."
    fake, ask, row = site.fake, site.ask, site.row
    n0 = len(fake.requests)
    fake.fail('reset')
    eq(ask().choices[0].message.content, 'You said: hi')
    keys = [q.headers.get('idempotency-key') for q in fake.requests[n0:] if q.path.endswith('/chat/completions')]
    eq((len(keys), keys[0] == keys[1]), (2, True))
    eq(row()['retries'][0]['reason'], 'reset')

def test_refused_connections(site):
    "Refused connections are sent again `retries` times with backoff, then answered 503."
    gw, oai, row = site.gw, site.oai, site.row
    gw.extra_models['gone'] = ModelSpec('gone', 'llamacpp', base_url='http://127.0.0.1:9')
    e = fails(lambda: oai.chat.completions.create(model='gone', messages=hi), openai.APIStatusError)
    eq((e.status_code, e.code), (503, 'upstream_unavailable'))
    x = row(); eq((x['retried'], {r['reason'] for r in x['retries']}), (2, {'refused'}))

def test_wrong_sampling_table(site):
    "A model whose sampling table is wrong is a 500 naming the model and the field; replaced, it is seen at once."
    gw, fake, oai = site.gw, site.fake, site.oai
    gw.extra_models['miscfg'] = ModelSpec('miscfg', 'llamacpp', base_url=fake.url, sampling={'temp': 0.5})
    e = fails(lambda: oai.chat.completions.create(model='miscfg', messages=hi), openai.InternalServerError)
    eq(e.code, 'config_error'); assert "model 'miscfg' sampling: unknown sampling field 'temp'; did you mean 'temperature'?" in e.message, e.message
    gw.extra_models['miscfg'] = ModelSpec('miscfg', 'llamacpp', base_url=fake.url)   # replaced under the same name: seen at once
    eq(gw.spec('miscfg').sampling, {})
    del gw.extra_models['miscfg']

def test_tool_parse_500(site):
    "llama.cpp's 500 for a malformed tool call is sent again, up to three attempts."
    fake, ask, row = site.fake, site.ask, site.row
    fake.fail('tool_parse_500', times=2)
    eq(ask().choices[0].message.content, 'You said: hi')
    eq([r['reason'] for r in row()['retries']], ['tool_call_parse'] * 2)
    fake.fail('tool_parse_500', times=3)
    e = fails(lambda: ask(), openai.InternalServerError)
    eq((e.status_code, e.code), (500, 'tool_call_parse_error'))
    eq(row()['retried'], 2)

def test_other_500(site):
    "Any other llama.cpp 500 is sent again at once, then reaches the client with the server's message."
    fake, ask, row = site.fake, site.ask, site.row
    fake.fail('tool_parse_500', times=3, message='image input is not supported - hint: if this is unexpected, you may need to provide the mmproj')
    e = fails(lambda: ask(), openai.InternalServerError)
    eq((e.status_code, e.code), (500, 'upstream_server_error')); assert 'image input is not supported' in e.message
    x = row(); eq((x['retried'], [r['reason'] for r in x['retries']], x['error']), (2, ['server_error'] * 3, 'upstream_server_error'))
    eq([r['then'] for r in x['retries']], ['resend', 'resend', 'give_up'])   # every attempt, and what came of it

def test_unreadable_events(site):
    "Events that are not JSON, or have no choices, are a broken stream, sent again; with no better luck, a 502."
    fake, ask, row = site.fake, site.ask, site.row
    for mode in ('not_json', 'no_choices'):
        for stream in (False, True):
            fake.fail(mode)
            eq(text_of(ask(stream=True)) if stream else ask().choices[0].message.content, 'You said: hi')
            x = row(); eq((x['retries'][0]['reason'], x['info']['malformed_chunks'] >= 1), ('broken_stream', True))
    fake.fail('not_json', times=2)
    eq(fails(lambda: ask(), openai.APIStatusError).status_code, 502)

def test_repaired_tool_call(site):
    "A tool call without an id, a type or arguments arrives repaired, streamed or not."
    fake, ask, row = site.fake, site.ask, site.row
    tools = [{'type': 'function', 'function': {'name': 'lookup', 'parameters': {'type': 'object', 'properties': {}}}}]
    fake.fail('bad_tool_call')
    tc = ask(tools=tools).choices[0].message.tool_calls[0]
    eq((tc.type, tc.function.name, tc.function.arguments, tc.id.startswith('call_')), ('function', 'lookup', '{}', True))
    fake.fail('bad_tool_call')
    chunks = ask(stream=True, tools=tools)
    deltas = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
    eq((deltas[0].type, bool(deltas[0].id), ''.join(d.function.arguments or '' for d in deltas)), ('function', True, '{}'))
    eq(row()['finish_reason'], 'tool_calls')

def test_context_overflow(site):
    "A prompt longer than the context is OpenAI's `context_length_exceeded`, streamed or not."
    ask, row = site.ask, site.row
    long = [{'role': 'user', 'content': 'word ' * 5000}]
    for stream in (False, True):
        e = fails(lambda: ask(stream=stream, messages=long), openai.BadRequestError)
        eq((e.status_code, e.code), (400, 'context_length_exceeded'))
        assert 'exceeds the available context size' in e.message
    x = row(); eq((x['status'], x['error'], x['retried']), (400, 'context_length_exceeded', 0))

def test_rate_limits_and_overload(site):
    "429, 503 and 529 are retried after Retry-After; a longer Retry-After goes back to the client, rounded up."
    gw, fake, ask, row = site.gw, site.fake, site.ask, site.row
    fake.fail('rate_limited', retry_after=0.3)
    t = time.monotonic(); eq(ask().choices[0].message.content, 'You said: hi')
    assert time.monotonic() - t >= 0.3
    fake.fail('overloaded', retry_after=0); fake.fail('unavailable', retry_after=None)
    ask()
    eq([r['reason'] for r in row()['retries']], ['overloaded', 'unavailable'])   # a 503 "Loading model": waited for, then asked
    fake.fail('rate_limited', retry_after=3600)
    e = fails(lambda: ask(), openai.RateLimitError)
    eq((e.status_code, e.response.headers['retry-after']), (429, '3600'))
    gw.retry = gw.retry._replace(retries=0)   # no resends: the upstream's short wait goes to the client, rounded up to whole seconds
    try:
        fake.fail('rate_limited', retry_after=0.4)
        e = fails(lambda: ask(), openai.RateLimitError)
        eq(e.response.headers['retry-after'], '1')
    finally: gw.retry = gw.retry._replace(retries=2)

def test_schema_the_server_cannot_compile(site):
    "A schema llama-server refuses (400, or 500 from old builds) is sent once more without it; the row records the resend."
    fake, ask, row = site.fake, site.ask, site.row
    bad = {'type': 'json_schema', 'json_schema': {'name': 'r', 'schema': {'$ref': 'https://example.com/s.json'}}}
    for status in (400, 500):
        for stream in (False, True):
            fake.fail('bad_schema', status=status)
            n0 = len(fake.requests)
            r = ask(stream=stream, response_format=bad)
            eq(text_of(r) if stream else r.choices[0].message.content, 'You said: hi')
            sent = [q.json for q in fake.requests[n0:] if q.path.endswith('/chat/completions')]
            eq(['response_format' in b for b in sent], [True, False])
            x = row(); eq((x['status'], [t['reason'] for t in x['retries']]), (200, ['schema_rejected']))
            assert 'JSON schema' in x['retries'][0]['detail']

# ---- features, over HTTP

def test_prompt_progress(site):
    "A client that sends `return_progress` gets llama.cpp's progress chunks; an upstream without them is not sent the field."
    gw, oai, ask = site.gw, site.oai, site.ask
    prog = [c.model_extra['prompt_progress'] for c in ask(stream=True, messages=[{'role': 'user', 'content': 'tell me ' * 30}],
                                                          extra_body={'return_progress': True}) if 'prompt_progress' in (c.model_extra or {})]
    assert len(prog) >= 2 and prog[-1]['processed'] == prog[-1]['total']
    seen = []
    gw.extra_models['spy'] = ModelSpec('spy', 'function')
    spy = gw.upstream(gw.extra_models['spy']); spy.fn = lambda b: seen.append(b) or 'ok'
    oai.chat.completions.create(model='spy', messages=hi, extra_body={'return_progress': True})
    assert 'return_progress' not in seen[-1]

def test_keys_stay_secret(site):
    "A key an upstream quotes back, whatever its variable is called, is `[redacted]` in the client's error, the log and the ledger."
    oai, row, tmp = site.oai, site.row, site.tmp
    async def leaky(req):
        return JSONResponse({'error': {'message': f"key {req.headers['authorization'][7:]} may not use this model", 'type': 'invalid_request_error'}}, 400)
    os.environ['PINECONE_WALRUS'], os.environ['SEA_OTTER'] = 'walrus-pinecone-0123', 'otter-kelp-4567'
    buf = io.StringIO(); h = logging.StreamHandler(buf); log.addHandler(h); log.setLevel(logging.INFO)
    try:
        with BackgroundServer(Starlette(routes=[Route('/v1/chat/completions', leaky, methods=['POST'])])) as leak:
            (tmp/'walrus.toml').write_text(f'[model."walrus"]\nruntime = "llamacpp"\nbase_url = "{leak.url}/v1"\napi_key_env = "PINECONE_WALRUS"\n'
                                           f'[model."otter"]\nruntime = "llamacpp"\nbase_url = "{leak.url}/v1"\napi_key_env = "SEA_OTTER"\n')
            os.environ['RAMABANA_CONFIG'] = str(tmp/'walrus.toml')
            try:
                e = fails(lambda: oai.chat.completions.create(model='walrus', messages=hi), openai.BadRequestError)
                eq(e.body['message'], 'upstream 400: key [redacted] may not use this model')
                eq(leak.requests[-1].headers['authorization'], 'Bearer walrus-pinecone-0123')   # the key did go to the upstream
                eq(httpx.post(site.srv.url + '/tokenize', json={'model': 'walrus', 'content': 'hi'}, timeout=30).json()['count'], None)   # no /tokenize there
                eq({q.path: q.headers.get('authorization') for q in leak.requests if q.path in ('/props', '/tokenize')},
                        {'/props': 'Bearer walrus-pinecone-0123', '/tokenize': 'Bearer walrus-pinecone-0123'})   # a keyed llama-server wants it there too
            finally: del os.environ['RAMABANA_CONFIG']
    finally:
        log.removeHandler(h); log.setLevel(logging.NOTSET)
    try:
        assert 'walrus-pinecone-0123' not in buf.getvalue() and '[redacted]' in buf.getvalue()
        assert 'walrus-pinecone-0123' not in json.dumps(row())
        eq(redact('otter-kelp-4567 and walrus-pinecone-0123'), '[redacted] and [redacted]')   # "otter" was never called
        Gateway(token='gateway-token-789', ledger=site.led)
        eq(redact('Bearer-less gateway-token-789'), 'Bearer-less [redacted]')
    finally: del os.environ['PINECONE_WALRUS'], os.environ['SEA_OTTER']

def test_token_counts(site):
    "`POST /v1/tokenize` counts with the model's server; a server without `/tokenize` says `count: null`; one refusing, a 503."
    gw, fake, hc2 = site.gw, site.fake, site.hc
    text = 'The capital of France is Paris, of course.'
    eq(hc2.post('/tokenize', json={'model': 'local', 'content': text}).json(), {'model': 'local', 'count': len(toy_tokenize(text))})
    eq((fake.last.path, fake.last.json), ('/tokenize', {'content': text}))
    eq(hc2.post('/tokenize', json={'model': 'local', 'content': ''}).json()['count'], 0)
    with FakeOpenAI() as plain:
        gw.extra_models['plain'] = ModelSpec('plain', 'llamacpp', base_url=plain.url + '/v1')
        eq(hc2.post('/tokenize', json={'model': 'plain', 'content': text}).json()['count'], None)
    gw.extra_models['gone-tok'] = ModelSpec('gone-tok', 'llamacpp', base_url='http://127.0.0.1:9')
    r = hc2.post('/tokenize', json={'model': 'gone-tok', 'content': text})
    eq((r.status_code, r.json()['error']['code']), (503, 'upstream_unavailable'))

# a stream whose prompt the slow double reads in batches, with progress, so that the first line comes before any answer
PROGRESS_BODY = {'model': 'local', 'stream': True, 'return_progress': True, 'messages': [{'role': 'user', 'content': 'long ' * 200}]}

def test_client_closes_its_stream(site):
    "A client that closes its stream: the upstream request is closed, the row is a 499 with the prompt read so far."
    fake, row = site.fake, site.row
    c0 = fake.cancelled
    fake.fail('slow_prefill', delay=0.2)
    with httpx.Client(timeout=30) as c, c.stream('POST', site.srv.url + '/chat/completions', json=PROGRESS_BODY) as r:
        first = next(r.iter_lines())
    assert 'prompt_progress' in first
    deadline = time.monotonic() + 20
    while fake.cancelled == c0 and time.monotonic() < deadline: time.sleep(0.02)
    eq(fake.cancelled, c0 + 1)
    while row()['status'] != 499 and time.monotonic() < deadline: time.sleep(0.02)
    eq((row()['status'], row()['error']), (499, 'client_closed'))
    cut = row()   # the prompt read so far, from llama.cpp's progress: no usage came
    assert cut['prompt_tokens'] >= 200 and 0 <= cut['evaluated_tokens'] < cut['prompt_tokens'] - cut['cached_tokens'], cut

def test_client_gives_up_waiting(site):
    "A client that gives up waiting for a whole answer: the upstream request is closed at once, the row is a 499."
    fake, row = site.fake, site.row
    c0 = fake.cancelled
    fake.fail('slow_prefill', delay=0.2)
    whole = {'model': 'local', 'messages': [{'role': 'user', 'content': 'other ' * 300}]}   # not cached: ~19 slow batches
    try: httpx.post(site.srv.url + '/chat/completions', json=whole, timeout=1); raise AssertionError('expected a timeout')
    except httpx.ReadTimeout: pass
    deadline = time.monotonic() + 20
    while fake.cancelled == c0 and time.monotonic() < deadline: time.sleep(0.02)
    eq(fake.cancelled, c0 + 1)
    while row()['status'] != 499 and time.monotonic() < deadline: time.sleep(0.02)
    eq((row()['status'], row()['error'], row()['stream']), (499, 'client_closed', 0))

def test_time_to_first_token(site):
    "Time to the first token runs to the first chunk with some of the answer, not to llama-server's first progress chunk."
    fake, row = site.fake, site.row
    fake.fail('slow_prefill', delay=0.3)
    with httpx.Client(timeout=30) as c, c.stream('POST', site.srv.url + '/chat/completions', json=PROGRESS_BODY) as r:
        events = [json.loads(l[6:]) for l in r.iter_lines() if l.startswith('data: {')]
    pp = events[0]['prompt_progress']
    eq((pp['processed'], pp['time_ms']), (pp['cache'], 0))   # at once: only what was cached counts as read
    assert row()['ttft_ms'] >= 300, row()['ttft_ms']
    eq((has_output(chunk({'role': 'assistant', 'content': None}, prompt_progress={})), has_output(chunk({'content': 'x'})),
             has_output(chunk(finish='stop')), has_output(chunk(usage={}))), (False, True, True, False))

def test_reasoning_history(site):
    "Reasoning the client left out is restored from the task's replay file; a client's reasoning on a user message never reaches the model."
    gw, fake, oai, row, tmp = site.gw, site.fake, site.oai, site.row, site.tmp
    fake.script(Reply('4', reasoning='2 + 2 is 4.'))
    r = oai.chat.completions.create(model='local', messages=[{'role': 'user', 'content': '2+2?'}], extra_headers={'x-ramabana-task': 't1'})
    eq((r.choices[0].message.content, r.choices[0].message.model_extra.get('reasoning_content')), ('4', '2 + 2 is 4.'))
    assert (tmp/'tasks'/'t1'/'local-replay.jsonl').exists()
    hist = [{'role': 'user', 'content': '2+2?', 'reasoning_content': 'not mine'}, {'role': 'assistant', 'content': '4'}, {'role': 'user', 'content': 'and 3+3?'}]
    oai.chat.completions.create(model='local', messages=hist, extra_headers={'x-ramabana-task': 't1'})
    sent = fake.last.json['messages']
    eq([m.get('reasoning_content') for m in sent], [None, '2 + 2 is 4.', None])
    eq(row()['info'], {'restored_reasoning': 1})   # the ledger says what the gateway put back
    oai.chat.completions.create(model='local', messages=hist, extra_headers={'x-ramabana-task': 'other-task'})
    eq(fake.last.json['messages'][1].get('reasoning_content'), None)     # another task's file holds nothing
    gw.reasoning_history = 'drop'
    try:
        oai.chat.completions.create(model='local', messages=[hist[0], {**hist[1], 'reasoning_content': 'x'}, hist[2]], extra_headers={'x-ramabana-task': 't1'})
        assert not any('reasoning_content' in m for m in fake.last.json['messages'])
    finally: gw.reasoning_history = 'auto'

def test_structured_output(site):
    "llama.cpp gets the nested `json_schema` form in the client's order, none when off; `grammar` and `json_schema` pass through."
    gw, fake, ask = site.gw, site.fake, site.ask
    schema = {'type': 'object', 'properties': {'z': {'type': 'string'}, 'a': {'type': 'integer'}}, 'required': ['z', 'a']}
    ask(response_format={'type': 'json_schema', 'schema': schema})
    rf = fake.last.json['response_format']
    eq((rf['type'], list(rf['json_schema']['schema']['properties'])), ('json_schema', ['z', 'a']))
    gw.structured_output = False
    try:
        ask(response_format={'type': 'json_schema', 'json_schema': {'name': 'r', 'schema': schema}})
        assert 'response_format' not in fake.last.json
    finally: gw.structured_output = True
    gbnf = 'root ::= "yes" | "no"'   # llama-server's own constraints, a grammar and a bare schema, go as the client sent them
    try:
        for trust in (True, False):
            gw.trust_client = trust
            ask(extra_body={'grammar': gbnf, 'json_schema': schema})
            eq((fake.last.json['grammar'], fake.last.json['json_schema']), (gbnf, schema))
    finally: gw.trust_client = True

def test_sampling(site):
    "Each value's source is stored with the call; a client field the pipeline rejected comes back in `x-ramabana-sampling`."
    fake, oai, row = site.fake, site.oai, site.row
    raw = oai.chat.completions.with_raw_response.create(model='local', messages=hi, temperature=0.3, extra_body={'reasoning_effort': 'banana'})
    issues = json.loads(raw.headers['x-ramabana-sampling'])
    eq(issues[0]['field'], 'reasoning_effort')
    assert 'reasoning_effort' not in fake.last.json and fake.last.json['temperature'] == 0.3
    x = row()
    eq((x['sampling']['sources']['temperature'], x['sampling_issues'][0]['field']), ('client', 'reasoning_effort'))
    eq(json.loads(raw.headers['x-ramabana-sampling-sources']), {'temperature': 'client'})
    assert 'x-ramabana-sampling' not in oai.chat.completions.with_raw_response.create(model='local', messages=hi).headers

def test_profiles(site):
    "`local:creative` is `local` with the built-in profile, each value's rung named; a profile nobody defined is a 404."
    fake, oai, row, hc3 = site.fake, site.oai, site.row, site.hc
    raw = oai.chat.completions.with_raw_response.create(model='local:creative', messages=hi)
    eq((fake.last.json['model'], fake.last.json['temperature'], fake.last.json['top_p']), (site.local.model_id, 1.2, 0.95))
    eq(json.loads(raw.headers['x-ramabana-sampling-sources']), {'temperature': 'profile:creative', 'top_p': 'profile:creative'})
    x = row()
    eq((x['model'], x['sampling']['profile'], x['sampling']['sources']['top_p']), ('local:creative', 'creative', 'profile'))
    e = fails(lambda: oai.chat.completions.create(model='local:fast', messages=hi), openai.NotFoundError)
    eq((e.code, e.body['message']), ('model_not_found', "unknown profile 'fast' for model 'local'; known profiles: coding, creative, reasoning"))
    eq(hc3.get('/models/local:fast').json()['error']['code'], 'model_not_found')

def test_global_rung_and_config_profiles(site):
    "config.toml's defaults and profiles are rungs, listed by `/v1/models`; a mistake keeps the last config that read, and `/health` names it."
    fake, oai, row, hc3, tmp, srv2 = site.fake, site.oai, site.row, site.hc, site.tmp, site.srv
    ladder = tmp/'ladder.toml'
    ladder.write_text('[inference.defaults]\ntop_k = 33\n[inference.profile.terse]\nmax_tokens = 16\n')
    os.environ['RAMABANA_CONFIG'] = str(ladder)
    try:
        oai.chat.completions.create(model='local:terse', messages=hi)
        eq((fake.last.json['top_k'], fake.last.json['max_tokens']), (33, 16))
        eq(row()['sampling']['sources'], {'temperature': 'floor', 'top_k': 'global', 'max_tokens': 'profile'})
        ms = {m['id']: m for m in hc3.get('/models').json()['data']}
        eq((ms['local:terse']['profile'], ms['local:terse']['runtime'], ms['local']['profile']), ('terse', 'llamacpp', None))
        assert {'smollm2:reasoning', 'echo:coding', 'local:creative'} <= set(ms), sorted(ms)
        eq(hc3.get('/models/local:terse').json(), ms['local:terse'])
        with assertLogs('ramabana', 'ERROR'):   # a typo in a live edit: the last config that read goes on serving, and says why
            ladder.write_text('[inference.profile.terse]\nmax_tokns = 16\n')
            oai.chat.completions.create(model='local:terse', messages=hi)
        eq(fake.last.json['max_tokens'], 16)
        health = lambda: httpx.get(srv2.url.removesuffix('/v1') + '/health', timeout=30).json()
        eq(health()['config_error'], "ladder.toml: [inference.profile.terse]: unknown sampling field 'max_tokns'; did you mean 'max_tokens'?")
        ladder.write_text('[inference.profile.terse]\nmax_tokens = 8\n')   # mended: read at the next request
        oai.chat.completions.create(model='local:terse', messages=hi)
        eq((fake.last.json['max_tokens'], 'config_error' in health()), (8, False))
    finally: del os.environ['RAMABANA_CONFIG']
    oai.chat.completions.create(model='local', messages=hi)   # the default (empty) config again

def test_which_message_changed(site):
    "Per purpose, the row says where the history stopped matching the previous request: -1 when it only grew."
    oai, row = site.oai, site.row
    h1 = [{'role': 'user', 'content': 'a'}]
    h2 = h1 + [{'role': 'assistant', 'content': 'b'}, {'role': 'user', 'content': 'c'}]
    h3 = [{'role': 'user', 'content': 'a'}, {'role': 'assistant', 'content': '(summarised)'}, {'role': 'user', 'content': 'c'}]
    got = []
    for h, purpose in [(h1, 'planner'), (h2, 'planner'), (h1, 'compaction'), (h3, 'planner')]:
        oai.chat.completions.create(model='local', messages=h, extra_headers={'x-ramabana-purpose': purpose})
        x = row(); got.append((x['purpose'], x['messages'], x['changed']))
    eq(got, [('planner', 1, -1), ('planner', 3, -1), ('compaction', 1, -1), ('planner', 3, 1)])

# ---- did the sampling land? The gateway reads the server's `/slots` after each call; these slots can report values of their own.

@dataclass
class KeptSlot(Slot):
    "A fake's slot whose reported params `force` overrides, as a server that applies values of its own would."
    force: dict = field(default_factory=dict)
    def to_json(self):
        d = super().to_json()
        if self.params is not None: d['params'] = {**self.params, **self.force}
        return d

def keep_params(fk):
    fk.slots = [KeptSlot(s.id, s.n_ctx) for s in fk.slots]
    return fk

class SlowSlots(FakeLlamaServer):
    "A llama-server double whose `/slots` answers only once `gate` is set (at most 60 s)."
    def __init__(self, **kw): super().__init__(**kw); self.gate = threading.Event()
    def app(self):
        inner = super().app()
        async def app(scope, receive, send):
            if scope['type'] == 'http' and scope['path'] == '/slots': await asyncio.to_thread(self.gate.wait, 60)
            await inner(scope, receive, send)
        return app

SENT = dict(temperature=0.3, seed=42, top_p=0.9, extra_body={'top_k': 7, 'min_p': 0.1})

@pytest.fixture(scope='module')
def kept(site):
    "A double whose slots keep their last params (the model `kept`), given to the gateway by URL."
    k = keep_params(FakeLlamaServer(n_ctx=4096)).start()
    site.gw.extra_models['kept'] = ModelSpec('kept', 'llamacpp', base_url=k.url)
    try: yield k
    finally: k.stop()

def test_readback_all_landed(site, kept):
    "With `readback='all'` each answered call's row says which fields the server applied otherwise: `[]` when all landed."
    gw, oai = site.gw, site.oai
    must_fail(lambda: Gateway(ledger=site.led, readback='sometimes'), contains='readback should be managed, all or off')
    gw.readback = 'all'   # these doubles are given by URL
    raw = oai.chat.completions.with_raw_response.create(model='kept', messages=hi, **SENT)
    x = site.last_call('kept')
    eq((x['id'], x['status'], x['readback']), (raw.headers['x-ramabana-call-id'], 200, []))
    eq(kept.slots[0].params['temperature'], 0.30000001192092896)   # what the server holds, through float32
    list(oai.chat.completions.create(model='kept', messages=hi, stream=True, **SENT))
    eq(site.last_call('kept')['readback'], [])

def test_readback_mismatch(site, kept):
    "A server that applies a value of its own: the row says which field, sent and applied; a refused call is not read back."
    gw, oai, ask, last_call = site.gw, site.oai, site.ask, site.last_call
    gw.readback = 'all'
    kept.slots[0].force = {'top_k': 40, 'seed': 4294967295}
    oai.chat.completions.create(model='kept', messages=hi, **SENT)
    eq(last_call('kept')['readback'], [dict(field='top_k', sent=7, applied=40), dict(field='seed', sent=42, applied=4294967295)])
    oai.chat.completions.create(model='kept', messages=hi, seed=-1)   # "draw a seed": the server's 4294967295 is that, not a mismatch
    eq(last_call('kept')['readback'], [])
    kept.slots[0].force = {}
    ask(temperature=0.3)
    eq(last_call('local')['readback'], [])
    fails(lambda: oai.chat.completions.create(model='kept', messages=[{'role': 'user', 'content': 'word ' * 5000}], seed=1), openai.BadRequestError)
    eq((last_call('kept')['status'], last_call('kept')['readback']), (400, None))   # only answered calls are read back

def test_readback_off_the_clients_path(site, kept):
    "The client gets its answer before the readback; a `/slots` slower than `readback_timeout` leaves the row unchecked; 'managed' skips a server given by URL."
    gw, oai, last_call = site.gw, site.oai, site.last_call
    gw.readback = 'all'
    slow = keep_params(SlowSlots(n_ctx=4096)).start()
    try:
        gw.extra_models['slow'] = ModelSpec('slow', 'llamacpp', base_url=slow.url)
        quick = openai.OpenAI(base_url=site.srv.url, api_key='unused', max_retries=0, timeout=10)
        gw.readback_timeout = 30
        eq(quick.chat.completions.create(model='slow', messages=hi, seed=3).choices[0].message.content, 'You said: hi')
        eq(text_of(quick.chat.completions.create(model='slow', messages=hi, seed=3, stream=True)), 'You said: hi')
        assert not slow.gate.is_set()
        slow.gate.set()
        eq(last_call('slow')['readback'], [])
        slow.gate.clear(); gw.readback_timeout = 0.2
        eq(quick.chat.completions.create(model='slow', messages=hi, seed=3).choices[0].message.content, 'You said: hi')
        x = last_call('slow')
        eq((x['status'], x['readback']), (200, None))
        slow.gate.set(); gw.readback_timeout = 5.0
        gw.readback = 'managed'
        oai.chat.completions.create(model='kept', messages=hi, seed=42)
        eq(last_call('kept')['readback'], None)    # by default a server given by URL is not asked
    finally:
        slow.gate.set(); gw.readback, gw.readback_timeout = 'managed', 5.0
        slow.stop()

def test_readback_only_when_nobody_came_between(site):
    "A readback is kept only if no other request reached the server between the call's end and the read."
    gw, oai = site.gw, site.oai
    slow2 = keep_params(SlowSlots(n_ctx=4096)).start()
    try:
        gw.extra_models['slow2'] = ModelSpec('slow2', 'llamacpp', base_url=slow2.url)
        gw.readback, gw.readback_timeout = 'all', 30
        a = oai.chat.completions.with_raw_response.create(model='slow2', messages=hi, seed=3)
        b = oai.chat.completions.with_raw_response.create(model='slow2', messages=hi, seed=5)
        slow2.gate.set()
        got = httpx.get(site.srv.url + '/calls', params={'limit': 2, 'model': 'slow2'}, timeout=60).json()['data']
        eq([(x['id'], x['readback']) for x in got], [(b.headers['x-ramabana-call-id'], []), (a.headers['x-ramabana-call-id'], None)])
    finally:
        slow2.gate.set(); gw.readback, gw.readback_timeout = 'managed', 5.0
        slow2.stop()

# ---- many streams at once

def test_many_streams_at_once(tmp_path):
    "200 streamed requests at once through one gateway to one server: each gets its own answer, and the ledger holds 200 rows."
    fake8 = FakeLlamaServer(n_slots=8, n_ctx=8*1024).start()
    led200 = Ledger(tmp_path/'200.sqlite')
    srv3 = GatewayServer(Gateway(ledger=led200, models={'local': ModelSpec('local', 'llamacpp', base_url=fake8.url)})).start()
    async def one(c, i):
        body = {'model': 'local', 'stream': True, 'messages': [{'role': 'user', 'content': f'request number {i}'}]}
        out = []
        async with c.stream('POST', '/chat/completions', json=body) as r:
            assert r.status_code == 200, r.status_code
            async for _, data in aiter_sse(r.aiter_lines()):
                if data == '[DONE]': return ''.join(out)
                ch = json.loads(data)
                out += [c['delta'].get('content') or '' for c in ch['choices']]
        raise AssertionError(f'stream {i} ended without [DONE]')
    async def all_at_once():
        async with httpx.AsyncClient(base_url=srv3.url, timeout=120, limits=httpx.Limits(max_connections=200)) as c:
            return await asyncio.wait_for(asyncio.gather(*(one(c, i) for i in range(200))), 100)
    try:
        got = asyncio.run(all_at_once())
        eq(got, [f'You said: request number {i}' for i in range(200)])
        led200.flush()
        eq(led200.count(), 200)
        eq({r['status'] for r in led200.recent(500)}, {200})
    finally: srv3.stop(); fake8.stop(); led200.close()

def test_one_row_per_call(site):
    "Every call in this file's tests left exactly one row, whatever its outcome (run last: it counts what reached `fake`)."
    led = site.led
    led.flush()
    posts = [q for q in site.fake.requests if q.path.endswith('/chat/completions')]
    rows = led.recent(10_000)
    eq(len({r['id'] for r in rows}), len(rows))
    eq(sum(r['retried'] + 1 for r in rows if r['upstream'] == 'llamacpp' and r['model'].split(':')[0] == 'local'), len(posts))   # with its profiles
