"""A real Jupyter kernel for the tests that drive `%%ram` through one: `ramabana.kernel.Kernel`, the driver `ramabana ask`
and the benchmarks use, started at once, with the tests' shape: `run` and `collect` return a cell's iopub messages and
fail (an `AssertionError`) when it does not finish; `check` fails with the kernel's traceback."""
from pathlib import Path
from ramabana import kernel


class Kernel(kernel.Kernel):
    "A real ipykernel in `cwd` with `env`; `run` executes a cell and returns its iopub messages."
    def __init__(self, env:dict, cwd:Path):
        super().__init__(cwd, env, startup=90)
        self.prompts = []
        self.start()

    def collect(self, mid:str, timeout:float=120, until=None, replies:list|None=None) -> list[dict]:
        "The iopub messages of request `mid` until it is idle (or `until(msg)` is true); fails after `timeout` s."
        def answer(prompt):   # input requests: record the prompt, reply with the next answer
            self.prompts.append(prompt); return replies.pop(0)
        ex = super().collect(mid, timeout, grace=None, until=until, on_input=None if replies is None else answer)
        if ex.timed_out:
            raise AssertionError(f'the cell did not finish within {timeout} s; got {[m["header"]["msg_type"] for m in ex.messages]}')
        return ex.messages

    def run(self, code:str, cell_id:str|None=None, timeout:float=120, replies:list|None=None) -> list[dict]:
        "Run a cell; `replies` answer its input requests in order (their prompts end up in `self.prompts`)."
        self.prompts = []
        return self.collect(self.send(code, cell_id, stdin=replies is not None), timeout,
                            replies=None if replies is None else list(replies))

    def check(self, code:str, cell_id:str|None=None, timeout:float=120):
        "Run `code` as the cell `cell_id` and fail with the kernel's traceback if it raised; its outputs are not read."
        try: super().check(code, cell_id, timeout)
        except kernel.KernelError as e: raise AssertionError(str(e)) from None
