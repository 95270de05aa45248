"""What the gateway can carry: requests per second under a real load generator, next to the same upstream called directly.

Run: `python bench/gateway_throughput.py` (about two minutes; installs Debian's `wrk` first when it is missing and this
runs as root). The fake upstream and the gateway are the ones `bench/gateway_overhead.py` runs. On two cores the load
generator gets core 1 and the servers core 0 (`taskset`), so direct and gateway rows compare one server core each.
For each path, answer kind (whole, or streamed with 64 tokens) and number of connections (1, 20, 100) the table shows
wrk's req/s, p50 and p99, the gateway's CPU seconds per 1,000 requests (from /proc), and wrk's own CPU use, which says
how far the generator was from being the limit.
"""
import argparse, json, os, re, resource, shutil, signal, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from gateway_overhead import free_port, start

TICK = os.sysconf('SC_CLK_TCK')

def ensure_wrk() -> str:
    "The path of `wrk`, installed from Debian's packages when missing."
    if w := shutil.which('wrk'): return w
    if os.geteuid() != 0: raise SystemExit('wrk is not installed: apt-get install wrk')
    print('installing wrk (apt-get install wrk) ...', flush=True)
    subprocess.run(['apt-get', 'update', '-qq'], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(['apt-get', 'install', '-y', '-qq', 'wrk'], check=True, stdout=subprocess.DEVNULL)
    return shutil.which('wrk')

def pin(core) -> list:
    "A `taskset` prefix for `core` when the machine has more than one."
    return ['taskset', '-c', str(core)] if (os.cpu_count() or 1) > 1 and shutil.which('taskset') else []

def cpu_seconds(pid) -> float:
    "User and system CPU seconds of process `pid` so far."
    f = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK

def _ms(v, unit): return float(v) * {'us': 1e-3, 'ms': 1.0, 's': 1e3}[unit]

def wrk(url, body, conns, seconds, wrk_bin):
    "(req/s, p50 ms, p99 ms, wrk's CPU share of its core) for `conns` connections posting `body` for `seconds`."
    lua = Path(tempfile.mkdtemp())/'post.lua'
    lua.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(body))}\nwrk.headers["Content-Type"] = "application/json"\n')
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([*pin(1), wrk_bin, '-t1', f'-c{conns}', f'-d{int(seconds)}s', '--latency', '-s', str(lua), url],
                         capture_output=True, text=True, check=True).stdout
    wall, after = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / wall
    if 'Non-2xx' in out or 'Socket errors' in out: raise SystemExit(f'wrk saw errors:\n{out}')
    lat = {p: _ms(v, u) for p, v, u in re.findall(r'^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$', out, re.M)}
    if set(lat) != {'50', '99'}: raise SystemExit(f'no latency distribution in what wrk printed:\n{out}')
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', out)[1])
    return rps, lat['50'], lat['99'], own

def main(seconds:int=5):
    wrk_bin = ensure_wrk()
    up_port, gw_port = free_port(), free_port()
    up = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up + '/health', prefix=pin(0))]
    try:
        gw = start(['--serve-gateway', str(gw_port), up], f'http://127.0.0.1:{gw_port}/health', prefix=pin(0))
        procs.append(gw)
        paths = [('direct', up + '/v1/chat/completions', None), ('gateway', f'http://127.0.0.1:{gw_port}/v1/chat/completions', gw.pid)]
        rows = []
        for kind, n, stream in [('whole', 4, False), ('stream 64', 64, True)]:
            body = {'model': 'fake', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': n, 'stream': stream}
            for conns in (1, 20, 100):
                res = {}
                for name, url, pid in paths:
                    wrk(url, body, conns, 1, wrk_bin)   # warm up: connections, caches
                    c0 = cpu_seconds(pid) if pid else 0
                    rps, p50, p99, own = wrk(url, body, conns, seconds, wrk_bin)
                    cpu = (cpu_seconds(pid) - c0) / (rps * seconds) * 1000 if pid else None
                    res[name] = (rps, p50, p99, own, cpu)
                rows.append((kind, conns, res))
    finally:
        for p in procs: p.send_signal(signal.SIGINT)
        for p in procs:
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
    print(f'{"answer":10} {"conns":>5} | {"direct req/s":>12} {"p50 ms":>7} {"p99 ms":>7} | {"gateway req/s":>13} {"p50 ms":>7} '
          f'{"p99 ms":>7} {"vs direct":>9} {"CPU s/1k":>8} | {"wrk CPU":>12}')
    for kind, conns, r in rows:
        d, g = r['direct'], r['gateway']
        print(f'{kind:10} {conns:5} | {d[0]:12.0f} {d[1]:7.2f} {d[2]:7.2f} | {g[0]:13.0f} {g[1]:7.2f} {g[2]:7.2f} '
              f'{g[0]/d[0]:8.2f}x {g[4]:8.2f} | {d[3]*100:4.0f}% / {g[3]*100:3.0f}%')
    print('wrk CPU: the generator\'s share of its own core while measuring direct / gateway (100% would make it the limit)')

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seconds', type=int, default=5, help='seconds of load for each measurement')
    main(ap.parse_args().seconds)
