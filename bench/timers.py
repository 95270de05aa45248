"""What a timer costs on uvloop, and what `watch` costs a whole answer: a timer armed and cancelled (`call_at`, then
`cancel`), and an answer of two reads of three chunks each iterated bare and through `watch` with the default limits
and with a local model's (`first_byte` 600 s, `stream_idle` 120 s: the limit that applies changes at the first event).

Run: `python bench/timers.py [ROUNDS]` (default 5, best of each; a few seconds). Compare two versions in turn with
`PYTHONPATH=OLD_TREE python bench/timers.py`, then this checkout's.
"""
import asyncio, sys, time
import uvloop
from ramabana.failover import Timeouts, any_output, watch

N = 20000
CHUNK = {'choices': [{'index': 0, 'delta': {'content': 'a'}, 'finish_reason': None}]}

async def answer():
    "Two reads of three chunks, as the upstream of a short whole answer gives them."
    yield [CHUNK] * 3
    yield [CHUNK] * 3

async def per(f) -> float:
    "µs a call of the coroutine function `f`, over N calls."
    t = time.perf_counter()
    for _ in range(N): await f()
    return (time.perf_counter() - t) / N * 1e6

async def main(rounds:int):
    loop = asyncio.get_running_loop()
    async def timer(): loop.call_at(loop.time() + 30, print).cancel()
    async def bare():
        async for _ in answer(): pass
    async def watched(t=Timeouts()):
        async for _ in watch(answer(), t, produced=any_output): pass
    async def local(): await watched(Timeouts(first_byte=600.0, first_token=None, stream_idle=120.0))
    cases = {'a timer armed and cancelled': timer, 'an answer of two reads, bare': bare,
             '... through watch, default limits': watched, "... through watch, a local model's limits": local}
    best = {k: min([await per(f) for _ in range(rounds)]) for k, f in cases.items()}
    print(f'| µs, best of {rounds} rounds of {N} | |\n|---|---|')
    for k, v in best.items(): print(f'| {k} | {v:.2f} |')

if __name__ == '__main__': uvloop.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
