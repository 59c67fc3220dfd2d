"""torch_blas.py: tells the netlib reference BLAS from optimized ones by the
library that defines the sgemm_ PyTorch binds to, and finds this machine's."""

import os
import subprocess
import sys
import unittest

import helpers
from edgemt_tools.torch_blas import classify, symbol_provider, torch_blas

LIBDIR = "/usr/lib/x86_64-linux-gnu"
NETLIB_DIR = os.path.join(LIBDIR, "blas")


class ClassifyTest(unittest.TestCase):
    def test_netlib_reference_blas(self):
        blas = classify(f"{LIBDIR}/blas/libblas.so.3.11.0")
        self.assertEqual((blas.kind, blas.name), ("reference", "reference BLAS (netlib)"))

    def test_optimized_libraries_by_file_or_folder_name(self):
        for path, name in [(f"{LIBDIR}/openblas-openmp/libblas.so.3", "OpenBLAS"),
                           (f"{LIBDIR}/openblas-pthread/libopenblasp-r0.3.21.so", "OpenBLAS"),
                           (f"{LIBDIR}/blis-openmp/libblas.so.3", "BLIS"),
                           ("/opt/intel/lib/libmkl_rt.so.2", "MKL"),
                           (f"{LIBDIR}/atlas/libblas.so.3", "ATLAS")]:
            blas = classify(path)
            self.assertEqual((blas.kind, blas.name), ("optimized", name), path)

    def test_sgemm_built_into_torch_or_missing_is_unknown(self):
        self.assertEqual(classify("/venv/torch/lib/libtorch_cpu.so").kind, "unknown")
        self.assertEqual(classify(None).kind, "unknown")


class SymbolProviderTest(unittest.TestCase):
    def test_finds_the_defining_library_among_dependencies(self):
        # python3 links libc; `printf` is defined there, not in the executable.
        libc = symbol_provider("libc.so.6", "printf")
        self.assertIsNotNone(libc)
        self.assertIn("libc.so", os.path.basename(libc))

    def test_unknown_symbol_or_library_gives_none(self):
        self.assertIsNone(symbol_provider("libc.so.6", "edgemt_no_such_symbol"))
        self.assertIsNone(symbol_provider("libedgemt-not-loaded.so", "printf"))


class ThisMachineTest(unittest.TestCase):
    def test_torch_binds_sgemm_to_a_classified_blas(self):
        blas = torch_blas()
        # Debian's torch takes sgemm_ from libblas.so.3: always some BLAS here.
        self.assertIn(blas.kind, ("optimized", "reference"))
        print(f"PyTorch BLAS on this machine: {blas.name} ({blas.path})")

    def test_netlib_forced_first_is_seen_even_with_openblas_mapped(self):
        """With netlib's libblas.so.3 first on the search path, OpenBLAS may
        still be mapped (through liblapack.so.3), but sgemm_ is netlib's."""
        if not os.path.isfile(os.path.join(NETLIB_DIR, "libblas.so.3")):
            self.skipTest("netlib libblas3 is not installed here")
        code = ("import sys; sys.path.insert(0, %r); "
                "from edgemt_tools.torch_blas import torch_blas; print(torch_blas().kind)"
                % helpers.TOOLS_DIR)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=dict(os.environ, LD_LIBRARY_PATH=NETLIB_DIR), check=True)
        self.assertEqual(result.stdout.strip(), "reference")


if __name__ == "__main__":
    unittest.main()
