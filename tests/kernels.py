"""A real Jupyter kernel for the tests that drive `%%ram` through one (jupyter_client): cells sent as JupyterLab sends
them (with a `cellId`), their iopub messages collected, or their success checked; every wait is bounded."""
import queue, time
from pathlib import Path
from jupyter_client import KernelManager


class Kernel:
    "A real ipykernel in `cwd` with `env`; `run` executes a cell and returns its iopub messages."
    def __init__(self, env:dict, cwd:Path):
        self.km = KernelManager(kernel_name='python3')
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client(); self.kc.start_channels()
        self.kc.wait_for_ready(timeout=90)

    def send(self, code:str, cell_id:str|None=None, stdin:bool=False) -> str:
        msg = self.kc.session.msg('execute_request', dict(code=code, silent=False, store_history=True, user_expressions={},
                                                          allow_stdin=stdin, stop_on_error=True),
                                  metadata={'cellId': cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        return msg['header']['msg_id']

    def collect(self, mid:str, timeout:float=120, until=None, answers=None) -> list[dict]:
        "The iopub messages of request `mid` until it is idle (or `until(msg)` is true); fails after `timeout` s."
        out, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            if answers is not None:   # input requests: record the prompt, reply with the next answer
                try:
                    r = self.kc.stdin_channel.get_msg(timeout=0)
                    answers['prompts'].append(r['content']['prompt']); self.kc.input(answers['replies'].pop(0))
                except queue.Empty: pass
            try: m = self.kc.iopub_channel.get_msg(timeout=0.2)
            except queue.Empty: continue
            if m['parent_header'].get('msg_id') != mid: continue
            if m['header']['msg_type'] == 'status' and m['content']['execution_state'] == 'idle': return out
            out.append(m)
            if until and until(m): return out
        raise AssertionError(f'the cell did not finish within {timeout} s; got {[x["header"]["msg_type"] for x in out]}')

    def run(self, code:str, cell_id:str|None=None, timeout:float=120, replies:list|None=None) -> list[dict]:
        "Run a cell; `replies` answer its input requests in order (their prompts end up in `self.prompts`)."
        self.prompts = []
        answers = None if replies is None else {'prompts': self.prompts, 'replies': list(replies)}
        return self.collect(self.send(code, cell_id, stdin=replies is not None), timeout, answers=answers)

    def check(self, code:str, cell_id:str|None=None, timeout:float=120):
        "Run `code` as the cell `cell_id` and fail with the kernel's traceback if it raised; its outputs are not read."
        mid = self.send(code, cell_id)
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)   # raises queue.Empty after `timeout` s
            if reply['parent_header'].get('msg_id') == mid: break
        c = reply['content']
        assert c['status'] == 'ok', f"{c.get('ename')}: {c.get('evalue')}\n" + '\n'.join(c.get('traceback', []))[-6000:]

    def shutdown(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)
