"""What writing a row of the ledger costs SQLite and its Python binding, by how the row is bound and how its id is made:
every column bound (NULLs too) or only the values a row has (`sqlite_inserts`, as the ledger writes); ids random
(96 random bits) or ordered by time (a millisecond clock, then 48 random bits, as `Call` makes them); into a fresh
table and into one that already holds `PREFILL` rows. Each row is shaped as the gateway's `finish` writes a whole
answer's (22 of the 33 columns set), committed in transactions of 1 and of 10 rows (WAL, synchronous=NORMAL, no
automatic checkpoint, as the event loop's connection); CPU µs a row, user and system, the median of `ROUNDS`
rounds (each measuring every case in turn) and the best.

Run: `python bench/ledger_rows.py [ROWS] [ROUNDS] [PREFILL]` (default 3,000 rows, 5 rounds, 100,000 rows before; about
a minute).
"""
import os, sqlite3, statistics, sys, tempfile, time
from pathlib import Path
from ramabana.ledger import Ledger, INSERT_SQL, every_column, sqlite_inserts

ROW = dict(time='2026-12-02T06:07:24.725+00:00', model='fake', upstream='llamacpp', purpose='turn', task=None, status=200,
           stream=False, finish_reason='stop', prompt_tokens=5, cached_tokens=None, completion_tokens=4,
           reasoning_tokens=None, cache_write_tokens=None, cost_usd=0.0, evaluated_tokens=None, ttft_ms=0.41,
           prefill_ms=None, decode_ms=None, total_ms=0.62, upstream_ms=0.21, messages=1, changed=-1, retried=0, retries=[],
           error=None, sampling={'sampling': {'max_tokens': 4}, 'sources': {'max_tokens': 'client'}, 'ceiling': None,
                                 'trust_client': True, 'reasoning': False, 'profile': None},
           sampling_issues=[], info=None, dialect='chat', answered_by='fake', token=None)   # as `Exchange.finish` orders it

IDS = {'random': lambda: 'call-' + os.urandom(12).hex(),
       'time-ordered': lambda: 'call-%012x%s' % (time.time_ns() // 1_000_000, os.urandom(6).hex())}

BINDS = {'every column': every_column(INSERT_SQL), 'values only': sqlite_inserts}

def table(prefill:int, new_id) -> sqlite3.Connection:
    "A fresh ledger's table holding `prefill` rows with ids from `new_id`, on a connection set as the event loop's."
    path = Path(tempfile.mkdtemp())/'ledger.sqlite'
    Ledger(path).close()   # the table and its indexes, made by the ledger
    con = sqlite3.connect(path)
    con.execute('PRAGMA synchronous=NORMAL'); con.execute('PRAGMA wal_autocheckpoint=0')
    for i in range(0, prefill, 10_000):
        with con:
            for sql, params in sqlite_inserts({**ROW, 'id': new_id()} for _ in range(min(10_000, prefill - i))):
                con.executemany(sql, params)
    con.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    return con

def per_row(con, rows:list, per:int, bind) -> float:
    "CPU µs a row, committing `per` rows a transaction, bound by `bind`."
    t = time.process_time()
    for i in range(0, len(rows), per):
        with con:
            for sql, params in bind(rows[i:i + per]): con.executemany(sql, params)
    res = (time.process_time() - t) / len(rows) * 1e6
    con.execute('PRAGMA wal_checkpoint(TRUNCATE)')   # as the writer thread does now and then, outside the count
    return res

def main(n:int, rounds:int, prefill:int):
    cons = {(ids, before): table(before, new_id) for ids, new_id in IDS.items() for before in (0, prefill)}
    got = {}
    for _ in range(rounds):   # each round measures every case in turn: the machine's moods fall on all of them alike
        for (ids, before), con in cons.items():
            for bound, bind in BINDS.items():
                for per in (1, 10):
                    rows = [{**ROW, 'id': IDS[ids]()} for _ in range(n)]
                    got.setdefault((ids, before, bound), {}).setdefault(per, []).append(per_row(con, rows, per, bind))
    print(f'| ids | rows before | bound | CPU µs a row, 1 a commit | 10 a commit |\n|---|---|---|---|---|')
    for (ids, before, bound), v in got.items():
        print(f'| {ids} | {before:,} | {bound} | ' + ' | '.join(f'{statistics.median(v[per]):.1f} (best {min(v[per]):.1f})'
                                                                for per in (1, 10)) + ' |')
    for con in cons.values(): con.close()

if __name__ == '__main__':
    a = sys.argv[1:]
    main(int(a[0]) if a else 3000, int(a[1]) if len(a) > 1 else 5, int(a[2]) if len(a) > 2 else 100_000)
