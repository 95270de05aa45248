__version__ = "0.1.0"

def load_ipython_extension(ip):
    "`%load_ext ramabana`: register the `%%ram` magic (imported lazily to keep `import ramabana` light)."
    from .magic import load_ipython_extension as load
    return load(ip)

def unload_ipython_extension(ip):
    "`%unload_ext ramabana`: stop what the magic started."
    from .magic import unload_ipython_extension as unload
    return unload(ip)
