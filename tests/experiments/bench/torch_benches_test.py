#!/usr/bin/env python3
"""The PyTorch benchmarks of experiments/bench: contention_bench.py refuses
bad flags before torch is imported, tells a Python without torch where to
get it, and, where $RINGSIDE_TORCH_PYTHON imports torch, a small CPU run
(two Gloo processes) prints both cluster-file lines with values >= 0 that
its own comment lines' medians give; dataparallel_host_bench.py measures
the study's GPT-2 with transformers' module tree (150 submodules, 106.3 M
parameters) and positive times. Writes its cases to $XML_OUTPUT_FILE so that
a skipped case counts as skipped (tools/test_case_counts.py)."""

import os
import re
import subprocess
import sys
import unittest
from xml.sax.saxutils import quoteattr

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""), "ringside")
if not os.path.isdir(RUNFILES):  # run by hand from the checkout
    RUNFILES = os.path.join(os.path.dirname(__file__), "..", "..", "..")
SCRIPT = os.path.join(RUNFILES, "experiments", "bench", "contention_bench.py")
HOST_BENCH = os.path.join(RUNFILES, "experiments", "bench",
                          "dataparallel_host_bench.py")


def torch_python():
    python = os.environ.get("RINGSIDE_TORCH_PYTHON", "")
    if not python:
        return None
    ok = subprocess.run([python, "-c", "import torch"],
                        capture_output=True).returncode == 0
    return python if ok else None


class ContentionBenchTest(unittest.TestCase):
    def test_bad_flags_are_refused_naming_the_flag(self):
        for flag, name in (("--rounds=0", "--rounds"),
                           ("--bucket_mb=-1", "--bucket_mb"),
                           ("--device=tpu", "--device")):
            r = subprocess.run([sys.executable, SCRIPT, flag],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, flag)
            self.assertIn(name, r.stderr, flag)

    def test_without_torch_says_where_to_get_it(self):
        r = subprocess.run([sys.executable, "-c", "import torch"],
                           capture_output=True)
        if r.returncode == 0:
            self.skipTest(f"{sys.executable} imports torch")
        r = subprocess.run([sys.executable, SCRIPT, "--device=cpu"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("pip install torch", r.stderr)

    def test_a_cpu_run_prints_both_terms(self):
        python = torch_python()
        if python is None:
            self.skipTest("no $RINGSIDE_TORCH_PYTHON that imports torch")
        r = subprocess.run(
            [python, SCRIPT, "--device=cpu", "--size=256", "--matmuls=4",
             "--bucket_mb=1", "--rounds=2", "--layers=2", "--width=256",
             "--batch=16", f"--port={29600 + os.getpid() % 300}"],
            capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        sigma = re.search(r"^compute_slowdown = ([0-9.]+)$", r.stdout, re.M)
        fixed = re.search(r"^sync_fixed_ms = ([0-9.]+)$", r.stdout, re.M)
        self.assertIsNotNone(sigma, r.stdout)
        self.assertIsNotNone(fixed, r.stdout)
        ratio = re.search(r"all-reduces of 1 MB [0-9.]+ ms \([^)]*\): "
                          r"([0-9.]+)x", r.stdout)
        self.assertIsNotNone(ratio, r.stdout)
        self.assertAlmostEqual(float(sigma.group(1)),
                               max(0.0, float(ratio.group(1)) - 1), delta=2e-3)
        self.assertGreaterEqual(float(fixed.group(1)), 0.0)


class DataParallelHostBenchTest(unittest.TestCase):
    def test_the_studys_gpt2_and_its_host_work(self):
        python = torch_python()
        if python is None:
            self.skipTest("no $RINGSIDE_TORCH_PYTHON that imports torch")
        r = subprocess.run([python, HOST_BENCH, "--rounds=1"],
                           capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        import json
        out = json.loads(r.stdout)
        self.assertEqual(out["model"]["parameters"], 106331904)
        self.assertEqual(out["modules"], 150)
        self.assertGreater(out["ops"], 100)
        for key in ("replicate_ms", "dispatch_ms", "compute_ms"):
            self.assertGreater(out[key], 0, key)
        # The twin's dispatch leaves the arithmetic out.
        self.assertLess(out["dispatch_ms"], out["compute_ms"])

    def test_bad_rounds_are_refused(self):
        r = subprocess.run([sys.executable, HOST_BENCH, "--rounds=0"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--rounds", r.stderr)


class XmlResult(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cases = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.cases.append((test, ""))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.cases.append((test, f"<skipped message={quoteattr(reason)}/>"))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.cases.append(
            (test, f"<failure message={quoteattr(str(err[1]))}/>"))

    def addError(self, test, err):
        super().addError(test, err)
        self.cases.append((test, f"<error message={quoteattr(str(err[1]))}/>"))


if __name__ == "__main__":
    suite = unittest.TestSuite(
        unittest.defaultTestLoader.loadTestsFromTestCase(case)
        for case in (ContentionBenchTest, DataParallelHostBenchTest))
    result = unittest.TextTestRunner(resultclass=XmlResult,
                                     verbosity=2).run(suite)
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        with open(xml, "w", encoding="utf-8") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>'
                    '<testsuite name="TorchBenchesTest">\n')
            for test, body in result.cases:
                f.write(f'<testcase name="{test._testMethodName}" '
                        f'classname="{type(test).__name__}">{body}'
                        '</testcase>\n')
            f.write("</testsuite></testsuites>\n")
    sys.exit(0 if result.wasSuccessful() else 1)
