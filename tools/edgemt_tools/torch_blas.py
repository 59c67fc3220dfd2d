"""Which BLAS a PyTorch process runs its fp32 matrix products on.

Debian's python3-torch links the system `libblas.so.3` (its build reports
BLAS_INFO=generic). Unless an optimized BLAS is installed, that is the netlib
reference BLAS (/usr/lib/<triplet>/blas/libblas.so.3), about 5x slower on this
model than OpenBLAS: a PyTorch baseline measured on it flatters every
comparison. edgemt-compare therefore reports the BLAS and refuses the
reference one unless told otherwise.

The answer is the library that defines the `sgemm_` libtorch_cpu binds to
(dlsym in its scope, then dladdr), not the list of mapped files: OpenBLAS can
be mapped (pulled in by LAPACK) while sgemm_ still comes from netlib.
"""
import ctypes
import os
from typing import NamedTuple, Optional

# Substrings of a library's file or folder name that identify an optimized
# BLAS (Debian installs them as alternatives of libblas.so.3 in folders such
# as openblas-openmp/, blis-pthread/, atlas/; netlib's folder is blas/).
OPTIMIZED = (("openblas", "OpenBLAS"), ("blis", "BLIS"), ("mkl", "MKL"), ("atlas", "ATLAS"))


class Blas(NamedTuple):
    kind: str    # "optimized", "reference" or "unknown"
    name: str    # e.g. "OpenBLAS", "reference BLAS (netlib)"
    path: str    # the library that defines sgemm_, "" when none was found


def classify(path: Optional[str]) -> Blas:
    """What the library defining sgemm_ is. sgemm_ inside torch itself (pip's
    wheels link MKL statically) or nowhere: unknown."""
    if not path:
        return Blas("unknown", "no sgemm_ found", "")
    names = os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)
    for key, name in OPTIMIZED:
        if key in names:
            return Blas("optimized", name, path)
    if os.path.basename(path).startswith("libblas.so"):
        return Blas("reference", "reference BLAS (netlib)", path)
    return Blas("unknown", f"sgemm_ in {os.path.basename(path)}", path)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def symbol_provider(library: str, symbol: str) -> Optional[str]:
    """Resolved path of the file that defines `symbol` as `library` (already
    loaded) sees it: the library itself or one of its dependencies."""
    try:
        handle = ctypes.CDLL(library, mode=os.RTLD_NOLOAD)
        address = ctypes.cast(getattr(handle, symbol), ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    libc = ctypes.CDLL(None)
    info = _DlInfo()
    if not libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


def torch_blas() -> Blas:
    """The BLAS this process's PyTorch (imported here) multiplies with."""
    import torch
    torch_cpu = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    return classify(symbol_provider(torch_cpu, "sgemm_"))
