#!/usr/bin/env python3
"""How long `import ramabana` takes (goal < 0.3 s), beside baselines, each in a fresh interpreter.

    python bench/import_time.py [--runs N]

Prints the median wall time of N fresh-process imports and its ratio to a bare interpreter start.
"""
import argparse, statistics, subprocess, sys, time

CASES = [('python -c pass (baseline)', 'pass'),
         ('import json (stdlib)', 'import json'),
         ('import ramabana', 'import ramabana'),
         ('import ramabana.core', 'import ramabana.core'),
         ('import ramabana.cli', 'import ramabana.cli'),
         ('import httpx (a core dep)', 'import httpx')]

def wall(code:str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, '-c', code], check=True)
    return time.perf_counter() - t

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--runs', type=int, default=15)
    n = ap.parse_args().runs
    rows = [(name, statistics.median(wall(code) for _ in range(n))) for name, code in CASES]
    base = rows[0][1]
    print(f"{'case':32} {'median s':>9} {'added s':>8} {'x baseline':>10}")
    for name, t in rows: print(f'{name:32} {t:9.3f} {t - base:8.3f} {t / base:10.2f}')

if __name__ == '__main__': main()
