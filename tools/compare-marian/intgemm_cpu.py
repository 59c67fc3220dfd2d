"""Which int8 sums Marian's intgemm computes on this CPU, as edgemt's
`translate --marian-int8-sums` names them (runtime/kernels/
int8_gemm_marian.h): "exact" with AVX-512 VNNI, else the 16-bit saturating
sums of its AVX-512 BW, AVX2 or SSSE3 code. intgemm picks the best it has,
or what INTGEMM_CPUID names (read when it loads); it has no AVX-VNNI level,
so such CPUs run its AVX2 code."""

import os

BY_CPUID = {"AVX512VNNI": "exact", "AVX512BW": "avx512bw", "AVX2": "avx2", "SSSE3": "ssse3"}


def cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name.strip() == "flags":
                    return set(value.split())
    except OSError:
        pass
    return set()


def intgemm_sums(environ=os.environ) -> str:
    """The sums of the intgemm code Marian runs here (INTGEMM_CPUID first)."""
    forced = BY_CPUID.get(environ.get("INTGEMM_CPUID", "").upper())
    if forced is not None:
        return forced
    flags = cpu_flags()
    for flag, sums in (("avx512_vnni", "exact"), ("avx512bw", "avx512bw"), ("avx2", "avx2")):
        if flag in flags:
            return sums
    return "ssse3"
