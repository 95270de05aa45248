"""The SQLite ledger shared by several processes, as `serve --workers N` shares it: P processes each record rows and
await `committed` as fast as they can (C at a time, 0.5 ms of other work between a row and the next) for S seconds.

Run: `python bench/ledger_processes.py P S C` (e.g. `1 4 10`, then `2 4 10`). Prints for each process the rows it
wrote, how often the event loop found the file busy and handed its rows to the writer thread, `committed`'s p50 and
p99, and the process's CPU per row.
"""
import asyncio, multiprocessing as mp, sys, tempfile, time
from pathlib import Path

ROW = dict(time='2026-12-01T00:00:00.000+00:00', model='fake', upstream='llamacpp', purpose='turn', status=200, stream=False,
           finish_reason='stop', prompt_tokens=5, completion_tokens=4, cost_usd=0.0, total_ms=1.2, upstream_ms=0.9, messages=1,
           changed=-1, retried=0, retries=[], sampling={'sampling': {'temperature': 0.7, 'max_tokens': 4}, 'sources': {'temperature': 'floor'}},
           sampling_issues=[], dialect='chat', answered_by='fake')

def worker(path:Path, secs:float, conc:int, q):
    "One process: `conc` tasks recording rows and awaiting each one's commit; its figures go to `q`."
    import uvloop
    from ramabana.ledger import Ledger
    led, lat, handed = Ledger(path), [], [0]
    loop_commit = led._loop_commit
    def counted():
        ok = loop_commit()
        handed[0] += not ok
        return ok
    led._loop_commit = counted
    async def one(k):
        n, stop = 0, time.perf_counter() + secs
        while time.perf_counter() < stop:
            t = time.perf_counter()
            await led.committed(led.record(dict(ROW, id=f'{mp.current_process().pid}-{k}-{n}')))
            lat.append(time.perf_counter() - t)
            n += 1
            await asyncio.sleep(0.0005)   # the rest of a request
    async def main(): await asyncio.gather(*(one(k) for k in range(conc)))
    cpu = time.process_time()
    uvloop.run(main())
    cpu = time.process_time() - cpu
    led.close()
    lat.sort()
    q.put((len(lat), handed[0], lat[len(lat) // 2] * 1e3, lat[int(len(lat) * .99)] * 1e3, cpu))

if __name__ == '__main__':
    if len(sys.argv) != 4: raise SystemExit(__doc__)
    procs, secs, conc = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    path = Path(tempfile.mkdtemp())/'ledger.sqlite'
    from ramabana.ledger import Ledger
    Ledger(path).close()   # the table exists before the processes race to make it
    q = mp.Queue()
    ps = [mp.Process(target=worker, args=(path, secs, conc, q)) for _ in range(procs)]
    for p in ps: p.start()
    res = [q.get() for _ in ps]
    for p in ps: p.join()
    for n, handed, p50, p99, cpu in res:
        print(f'{n} rows ({n / secs:.0f}/s), handed to the writer {handed} times, committed p50 {p50:.3f} ms, p99 {p99:.2f} ms, '
              f'CPU {cpu / n * 1e6:.0f} µs a row')
