"""What each layer a streamed chunk passes costs, in-process: the upstream's generator, `watch`, `Exchange.attempt`,
`Exchange.answers`, `Exchange.batches` and the chat door's `door_stream` (bursts and events).

Run: `python bench/chunk_layers.py [RUNS] [PER_READ]`. An upstream yields 20,000 chunks already parsed (`parse_chunk`
is timed by bench/json_libs.py), in lists of PER_READ (default 64: the chunks of one network read when the upstream
writes 64 events at once, as bench/harness.py's does; 1: llama-server's one event a write), so only the
layers count; each layer is timed with the ones under it, RUNS times in turn (default 9), best of each, on uvloop as
the gateway runs.
"""
import asyncio, sys, tempfile, time
from pathlib import Path
import uvloop
from ramabana.core import ModelSpec
from ramabana.chat import parse_chunk
from ramabana.gateway import Gateway
from ramabana.ledger import Ledger
from ramabana.failover import any_output, watch, Timeouts
from ramabana.upstream import FunctionUpstream, register_upstream
from ramabana.doors import door_stream, ChatEvents, head_of

N = 20000
EVENTS = [b'{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{"content":"t%d "},'
          b'"finish_reason":null}]}' % i for i in range(N)]
EVENTS.append(b'{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}')
CHUNKS = [parse_chunk(e) for e in EVENTS]

PER_READ = int(sys.argv[2]) if len(sys.argv) > 2 else 64

class Ready(FunctionUpstream):
    "An upstream whose chunks are all there at once, in lists of PER_READ."
    runtime = 'ready'
    async def batches(self, body, call):
        for i in range(0, len(CHUNKS), PER_READ): yield CHUNKS[i:i + PER_READ]
register_upstream('ready', Ready)

async def drain(agen):
    async for _ in agen: pass

async def main(runs:int):
    gw = Gateway(ledger=Ledger(Path(tempfile.mkdtemp())/'l.sqlite'), models={'r': ModelSpec('r', 'ready')})
    body = {'model': 'r', 'messages': [{'role': 'user', 'content': 'hi'}], 'stream': True}
    async def ex(): return await gw.open_call(body, {}, time.perf_counter())
    async def upstream(): e = await ex(); await drain(e.up.batches(e.body, e.call))
    async def watched(): e = await ex(); await drain(watch(e.up.batches(e.body, e.call), Timeouts(), produced=any_output))
    async def attempt(): e = await ex(); await drain(e.attempt(e.target, e.body))
    async def answers(): e = await ex(); await drain(e.answers())
    async def batches(): e = await ex(); await drain(e.batches())
    async def stream():
        e = await ex(); a = e.batches()
        await drain(door_stream(e, await head_of(a, False), a, ChatEvents(e)))
    cases = {'upstream generator': upstream, '+ watch': watched, '+ attempt': attempt, '+ answers': answers,
             '+ batches (repair, assembler)': batches, '+ door_stream (bursts, events)': stream}
    best = dict.fromkeys(cases, float('inf'))
    for _ in range(runs):
        for k, f in cases.items():
            t = time.perf_counter(); await f(); best[k] = min(best[k], time.perf_counter() - t)
    print(f'µs a chunk, best of {runs} runs of {len(CHUNKS)} chunks in lists of {PER_READ}\n\n| layer | µs a chunk | this layer |\n|---|---|---|')
    prev = None
    for k, v in best.items():
        print(f'| {k} | {v / len(CHUNKS) * 1e6:.2f} | ' + (f'{(v - best[prev]) / len(CHUNKS) * 1e6:.2f}' if prev else '') + ' |')
        prev = k
    gw.ledger.close()

if __name__ == '__main__': uvloop.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9))
