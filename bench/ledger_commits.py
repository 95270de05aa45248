"""What a ledger row costs to commit alone and in company: rows of the ledger's own table (33 columns, two indexes)
inserted and committed through sqlite3 as the event loop's connection does (WAL, synchronous=NORMAL, no automatic
checkpoint), in transactions of 1, 2, 5, 10 and 20 rows; CPU µs a row (user and system), best of `ROUNDS`.

Run: `python bench/ledger_commits.py [ROWS] [ROUNDS]` (default 4,000 rows, 3 rounds; a few seconds). It says why
`Ledger.committed` lets the answers that end in the same turn of the event loop share one commit.
"""
import os, sqlite3, sys, tempfile, time
from pathlib import Path
from ramabana.ledger import COLUMNS, Ledger, INSERT_SQL

def row() -> tuple:
    "A row shaped as the gateway's: a fresh id, a time, short text and small numbers elsewhere."
    return tuple(os.urandom(16).hex() if k == 'id' else '2026-12-02T03:00:00.000+00:00' if k == 'time'
                 else 'x' if COLUMNS[k][0].startswith('TEXT') else 1 for k in COLUMNS)

def per_row(con, rows:list, per:int) -> float:
    "CPU µs a row, committing `per` rows a transaction."
    t = time.process_time()
    for i in range(0, len(rows), per):
        with con: con.executemany(INSERT_SQL, rows[i:i + per])
    return (time.process_time() - t) / len(rows) * 1e6

def main(n:int, rounds:int):
    path = Path(tempfile.mkdtemp())/'ledger.sqlite'
    Ledger(path).close()   # the table and its indexes, made by the ledger
    con = sqlite3.connect(path)
    con.execute('PRAGMA synchronous=NORMAL'); con.execute('PRAGMA wal_autocheckpoint=0')
    print(f'| rows a commit | CPU µs a row, best of {rounds} rounds of {n} rows |\n|---|---|')
    for per in (1, 2, 5, 10, 20):
        best = min(per_row(con, [row() for _ in range(n)], per) for _ in range(rounds))
        con.execute('PRAGMA wal_checkpoint(TRUNCATE)')   # as the writer thread does now and then
        print(f'| {per} | {best:.1f} |')

if __name__ == '__main__': main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
