"""How long `estimate_tokens` takes on 1 MB of text, against the bare arithmetic it stands for.

Run: `python bench/estimate_tokens.py`. The target is <= 5 ms for 1 MB (the compactor sizes every message of a long
conversation on each turn, so counting must cost nothing next to a model call).
"""
import timeit
from ramabana.runtime import estimate_tokens, CHARS_PER_TOKEN

def main(n=2000):
    text = ('the exporter writes one module per notebook; ' * 30_000)[:1_000_000]
    rows = []
    base = min(timeit.repeat(lambda: len(text) / CHARS_PER_TOKEN, number=n, repeat=5)) / n
    rows.append(('len(text)/3.25 inline (baseline)', base))
    rows.append(('estimate_tokens(text)', min(timeit.repeat(lambda: estimate_tokens(text), number=n, repeat=5)) / n))
    words = lambda t: t.count(' ') + 1  # a cheap stand-in tokenizer, to show the `count=` path's own overhead
    rows.append(('estimate_tokens(text, count=words)', min(timeit.repeat(lambda: estimate_tokens(text, words),
                                                                            number=20, repeat=3)) / 20))
    print(f'{"case (1 MB of text)":42} {"per call":>12} {"vs baseline":>12}')
    for name, t in rows: print(f'{name:42} {t*1e6:>9.2f} µs {t/base:>11.1f}x')
    ok = rows[1][1] <= 5e-3
    print(f'\nestimate_tokens on 1 MB: {rows[1][1]*1e3:.4f} ms  (target <= 5 ms: {"PASS" if ok else "FAIL"})')
    return ok

if __name__ == '__main__': raise SystemExit(0 if main() else 1)
