"""What the gateway's own request path costs, in-process and without any network: `open_call`, the answer's chunks,
the row and its commit, for a whole 4-token-sized answer from a function upstream; then `open_call`, `Gateway.target`,
`Gateway.route` and `extract_client_sampling` alone.

Run: `python bench/request_path.py [N] [ROUNDS]` (default 2,000 calls, 5 rounds; prints the best round and the
median). On a shared machine compare two versions by running them in turn, several times (`PYTHONPATH` at each).
"""
import asyncio, statistics, sys, tempfile, time
from pathlib import Path
import uvloop
from ramabana.core import ModelSpec
from ramabana.gateway import Gateway
from ramabana.ledger import Ledger
from ramabana.upstream import Call, Capabilities, FunctionUpstream, register_upstream
from ramabana.sampling import extract_client_sampling

register_upstream('function', FunctionUpstream)
BODY = {'model': 'fn', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': 4, 'stream': False}

def per(f, n) -> float:
    "µs a call of `f`, over `n` calls."
    t = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t) / n * 1e6

async def aper(f, n) -> float:
    "µs a call of the coroutine function `f`, over `n` calls."
    t = time.perf_counter()
    for _ in range(n): await f()
    return (time.perf_counter() - t) / n * 1e6

async def main(n:int, rounds:int):
    gw = Gateway(ledger=Ledger(Path(tempfile.mkdtemp())/'l.sqlite'), models={'fn': ModelSpec('fn', 'function')})
    gw.upstream(gw.spec('fn')).caps = Capabilities(source='props')   # as a llama-server that said what it supports
    async def whole():
        ex = await gw.open_call(dict(BODY), {}, time.perf_counter())
        async for _ in ex.chunks(): pass
        ex.finish(200)
        await gw.ledger.committed(ex.ticket)
    async def opened(): return await gw.open_call(dict(BODY), {}, time.perf_counter())
    call = Call(gw.spec('fn'))
    async def target(): return await gw.target('fn', BODY, call)
    for _ in range(200): await whole()   # warm-up
    res = {}
    for _ in range(rounds):
        res.setdefault('a whole call (open_call, chunks, finish, commit)', []).append(await aper(whole, n))
        res.setdefault('open_call', []).append(await aper(opened, n))
        res.setdefault('Gateway.target (sampling, history)', []).append(await aper(target, n))
        res.setdefault('Gateway.route', []).append(per(lambda: gw.route('fn'), n))
        res.setdefault('extract_client_sampling', []).append(per(lambda: extract_client_sampling(BODY), n))
    print(f'| µs, best of {rounds} rounds of {n} (median) | |\n|---|---|')
    for k, v in res.items(): print(f'| {k} | {min(v):.1f} ({statistics.median(v):.1f}) |')
    gw.ledger.close()

if __name__ == '__main__':
    uvloop.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 5))
