"""The JSON the gateway reads and writes, on the standard library, orjson and msgspec: which library the request path uses.

Run: `python bench/json_libs.py [RUNS]` (about a minute; `pip install orjson` for its column, msgspec is a dependency).
Each task is timed on the three libraries in turn, RUNS times (default 9), and the best of each is kept, so a busy
machine slows all three alike; the table gives the standard library's µs and each library's speed-up over it.
"""
import json, sys, timeit
from json.encoder import encode_basestring
import msgspec
from ramabana.chat import RawChunk, well_formed
try: import orjson
except ImportError: orjson = None

# a chat chunk as llama-server sends it, a 12-message request with tools and some non-ASCII, an event, an error, a row's JSON
CHUNK = {'id': 'chatcmpl-abc123', 'object': 'chat.completion.chunk', 'created': 1733000000, 'model': 'smollm2',
         'choices': [{'index': 0, 'delta': {'content': ' the'}, 'finish_reason': None}]}
RAW = json.dumps(CHUNK, separators=(',', ':')).encode()
WORDS = 'lorem ipsum dolor sit amet, consectetur adipiscing elit ' * 40
REQUEST = {'model': 'smollm2', 'stream': True, 'temperature': 0.7, 'max_tokens': 512,
           'messages': [{'role': 'system', 'content': 'You are a helpful assistant. ' * 20}] +
                       [{'role': ('user', 'assistant')[i % 2], 'content': WORDS[:400 + 37 * i] + ' é ✓'} for i in range(12)],
           'tools': [{'type': 'function', 'function': {'name': f'tool{i}', 'description': 'does a thing ' * 5, 'parameters': {
                      'type': 'object', 'properties': {'path': {'type': 'string'}, 'n': {'type': 'integer'}}, 'required': ['path']}}}
                     for i in range(6)]}
BODY = json.dumps(REQUEST, ensure_ascii=False).encode()
EVENT = {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'tool_use', 'id': 'call_1', 'name': 'ls', 'input': {}}}
ERROR = {'error': {'message': 'the upstream failed mid-answer and the part already sent is void; ask again',
                   'type': 'server_error', 'param': None, 'code': 'discarded'}}
ROW = {'sampling': {'temperature': 'model', 'top_p': 'profile:creative'},
       'retries': [{'reason': 'broken_stream', 'attempt': 1, 'detail': 'x', 'then': 'resend'}]}
TEXT = ' the "quick"\nbrown fox é'

def std_dumps(o): return json.dumps(o, separators=(',', ':'), ensure_ascii=False).encode()
_raw_decode = json.JSONDecoder().raw_decode
def keep(ch, raw):
    "What parse_chunk does after parsing: check the shapes, keep the bytes."
    ch = RawChunk(ch); ch.raw = raw
    return well_formed(ch['choices']) and ch

def libraries() -> dict:
    "Per library, its way of doing each task."
    dec, enc, enc_str = msgspec.json.Decoder().decode, msgspec.json.Encoder().encode, msgspec.json.Encoder(enc_hook=str).encode
    libs = {'stdlib': dict(loads=json.loads, chunk=lambda b: keep(_raw_decode(b.decode())[0], b), dumps=std_dumps,
                           string=lambda s: encode_basestring(s).encode(), row=lambda o: json.dumps(o, default=str)),
            'msgspec': dict(loads=dec, chunk=lambda b: keep(dec(b), b), dumps=enc, string=enc, row=lambda o: enc_str(o).decode())}
    if orjson is not None:
        libs['orjson'] = dict(loads=orjson.loads, chunk=lambda b: keep(orjson.loads(b), b), dumps=orjson.dumps, string=orjson.dumps,
                              row=lambda o: orjson.dumps(o, default=str).decode())
    return libs

TASKS = [(f'parse a {len(RAW)}-byte chunk', 'loads', RAW), ('`parse_chunk`: parse, check its shapes, keep its bytes', 'chunk', RAW),
         ('write a chunk', 'dumps', CHUNK), ('write an event (Messages `content_block_start`)', 'dumps', EVENT),
         ('write an error body', 'dumps', ERROR), ('one string as a JSON value (`json_str`)', 'string', TEXT),
         (f'read a {len(BODY) / 1024:.0f} KiB request body', 'loads', BODY), ('write the upstream request (`encode`)', 'dumps', REQUEST),
         ("a ledger row's JSON column", 'row', ROW)]

def best(f, arg, n:int) -> float:
    "Seconds per call of `f(arg)`, over `n` calls."
    return timeit.timeit(lambda: f(arg), number=n) / n

def main(runs:int=9):
    libs = libraries()
    names = list(libs)
    print(f'python {sys.version.split()[0]}, msgspec {msgspec.__version__}' + (f', orjson {orjson.__version__}' if orjson else '')
          + f'; best of {runs} interleaved runs\n')
    print('| task | stdlib µs | ' + ' | '.join(names[1:]) + ' |\n|---|---|' + '---|' * (len(names) - 1))
    for label, kind, arg in TASKS:
        fs = [libs[n][kind] for n in names]
        n = max(20, int(0.02 / best(fs[0], arg, 50)))   # about 20 ms a run
        t = [float('inf')] * len(fs)
        for _ in range(runs):
            for i, f in enumerate(fs): t[i] = min(t[i], best(f, arg, n))
        print(f'| {label} | {t[0] * 1e6:.2f} | ' + ' | '.join(f'×{t[0] / x:.1f}' for x in t[1:]) + ' |')

if __name__ == '__main__': main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
