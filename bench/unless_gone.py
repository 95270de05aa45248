"""What watching for a client that leaves costs a request: `unless_disconnected` (ramabana.doors) around work that returns at
once, on uvloop, in instructions a call as valgrind counts them (the difference between 1,000 and 11,000 calls), beside
the same work awaited with no watching at all.

Run: `python bench/unless_gone.py [TREE]` (TREE: a checkout whose ramabana to measure, e.g. an older one made with
`git worktree add /tmp/old REV`; default this one). About a minute.
"""
import asyncio, sys
from pathlib import Path
from instructions import counted

async def waits(): await asyncio.sleep(3600)   # a client that stays
async def quick(): return 42
async def bare(aw, receive): return True, await aw

def run(how:str, n:int):
    "Await `n` quick pieces of work through `how` (bare, or watched)."
    import uvloop
    if how == 'bare': f = bare
    else: from ramabana.doors import unless_disconnected as f
    async def main():
        for _ in range(n): await f(quick(), waits)
    uvloop.run(main())

def count(how:str, n:int, tree:Path) -> int:
    "Instructions valgrind counts for `run(how, n)` with `tree`'s ramabana."
    return counted([Path(__file__).resolve(), '--run', how, n], tree)

def main(tree:Path):
    print(f'| work awaited (ramabana from {tree}) | instructions a call |\n|---|---|')
    for how in ('bare', 'watched'):
        print(f'| {how} | {(count(how, 11_000, tree) - count(how, 1_000, tree)) / 10_000:,.0f} |')

if __name__ == '__main__':
    if sys.argv[1:2] == ['--run']: run(sys.argv[2], int(sys.argv[3]))
    else: main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent.parent)
