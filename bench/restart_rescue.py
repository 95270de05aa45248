"""How often a restart rescues a cut answer: the same request asked again begins with the text the client already has.

When a stream is cut and the next model cannot continue a prefill, the gateway asks it the whole request again and
relays only what comes after the text the client has, if the new answer begins with exactly that text; otherwise the
call ends with the original error (`Exchange.answers`, 05h). How often that works depends on decoding: this asks a
local model each question twice, the second time as the restart would, and counts the answers whose second version
begins with the first one's text up to a cut at a quarter, half and three quarters of it.

Run (from the repository, in its venv; `ramabana setup` done): `python bench/restart_rescue.py [--model smollm2]
[--questions 20] [--max-tokens 96]`. It starts the model's llama-server through an in-process gateway, as the agent
does, and prints one row per decoding: greedy (temperature 0, top_k 1), sampled with a fixed seed, sampled without one.
"""
import argparse, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

QUESTIONS = ['What is 7 times 6?', 'Name three colours.', 'What is the capital of France?', 'Write a haiku about rain.',
             'What does a Python list hold?', 'How many days are in a leap year?', 'Explain what a variable is.',
             'What is the opposite of hot?', 'Give me a word that rhymes with cat.', 'What does CPU stand for?',
             'Why is the sky blue?', 'Say hello in French.', 'What is 100 divided by 4?', 'Name a fruit that is yellow.',
             'What is a prime number?', 'How do you sort a list in Python?', 'What is the boiling point of water?',
             'Write one sentence about cats.', 'What comes after Tuesday?', 'What is JSON?']
DECODINGS = {'greedy': dict(temperature=0.0, extra_body={'top_k': 1}),
             'sampled, seed 7': dict(temperature=0.8, seed=7),
             'sampled, no seed': dict(temperature=0.8)}
CUTS = (0.25, 0.5, 0.75)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', default='smollm2')
    ap.add_argument('--questions', type=int, default=len(QUESTIONS))
    ap.add_argument('--max-tokens', type=int, default=96)
    a = ap.parse_args()
    import openai
    from ramabana.app import start_gateway
    from ramabana.core import format_table
    rows, t0 = [], time.monotonic()
    gw = start_gateway()
    try:
        client = openai.OpenAI(base_url=gw.url, api_key='-', max_retries=0, timeout=600)
        def ask(q, kw):
            r = client.chat.completions.create(model=a.model, messages=[{'role': 'user', 'content': q}],
                                               max_tokens=a.max_tokens, **kw)
            return r.choices[0].message.content or ''
        for name, kw in DECODINGS.items():
            rescued, n = [0] * len(CUTS), 0
            for q in QUESTIONS[:a.questions]:
                first, again = ask(q, kw), ask(q, kw)
                if not first: continue
                n += 1
                for i, c in enumerate(CUTS): rescued[i] += again.startswith(first[:max(1, int(len(first) * c))])
            rows.append((name, n, *(f'{r}/{n} ({100 * r / max(n, 1):.0f}%)' for r in rescued)))
    finally: gw.stop()
    print(f'{a.model}, {a.questions} questions, {a.max_tokens} tokens at most, {time.monotonic() - t0:.0f} s\n')
    print(format_table(rows, ('decoding', 'answers', *(f'rescued, cut at {int(c * 100)}%' for c in CUTS))))

if __name__ == '__main__': main()
