#!/usr/bin/env python3
"""tools/test_case_counts.py: Bazel's status per target decides the count;
a stale test.xml never turns a target that did not run into passes."""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.environ.get("TEST_SRCDIR", ""), "ringside", "tools",
                      "test_case_counts.py")
if not os.path.exists(SCRIPT):  # run by hand from the checkout
    SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                          "test_case_counts.py")

PASSING = """<testsuites><testsuite name="S">
<testcase classname="S" name="a" status="run" result="completed"/>
<testcase classname="S" name="b" status="run" result="completed"/>
</testsuite></testsuites>"""
ONE_FAILED = """<testsuites><testsuite name="S">
<testcase classname="S" name="a" status="run" result="completed"/>
<testcase classname="S" name="b" status="run" result="completed">
<failure message="expected 1, got 2"/></testcase>
</testsuite></testsuites>"""
ONE_SKIPPED = """<testsuites><testsuite name="S">
<testcase classname="S" name="a" status="run" result="completed"/>
<testcase classname="S" name="gpu" status="run" result="skipped">
<skipped message="needs a GPU"/></testcase>
</testsuite></testsuites>"""


class CountsTest(unittest.TestCase):

    def setUp(self):
        self.logs = tempfile.mkdtemp()

    def xml(self, target, text):
        d = os.path.join(self.logs, target[2:].replace(":", "/"))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "test.xml"), "w") as f:
            f.write(text)

    def run_counts(self, summary, extra_args=()):
        p = subprocess.run([sys.executable, SCRIPT, self.logs,
                            *extra_args],
                           input=summary, capture_output=True, text=True,
                           check=False)
        return p.returncode, p.stdout

    def last_line(self, out):
        return out.strip().splitlines()[-1]

    def test_passed_targets_count_their_cases(self):
        self.xml("//t:a", PASSING)
        self.xml("//t:b", ONE_SKIPPED)
        rc, out = self.run_counts(
            "//t:a      PASSED in 0.3s\n//t:b   (cached) PASSED in 1.0s\n")
        self.assertEqual(rc, 0)
        self.assertEqual(self.last_line(out),
                         "3 passed, 0 failed, 1 skipped (test cases in 2 "
                         "targets)")
        self.assertIn("gpu: needs a GPU", out)

    def test_stale_xml_of_a_target_that_did_not_run_is_not_counted(self):
        # An earlier run's passing test.xml is still on disk.
        for t in ("//t:build", "//t:nostatus", "//t:slow", "//t:cut"):
            self.xml(t, PASSING)
        rc, out = self.run_counts(
            "//t:build                FAILED TO BUILD\n"
            "//t:nostatus             NO STATUS\n"
            "//t:slow                 TIMEOUT in 60.0s\n"
            "//t:cut                  INCOMPLETE\n")
        self.assertEqual(rc, 1)
        self.assertEqual(self.last_line(out),
                         "0 passed, 4 failed, 0 skipped (test cases in 4 "
                         "targets)")
        self.assertIn("FAILED TO BUILD: it failed to build", out)
        self.assertIn("NO STATUS", out)
        self.assertIn("TIMEOUT: it timed out", out)

    def test_failed_target_counts_its_failed_cases(self):
        self.xml("//t:f", ONE_FAILED)
        rc, out = self.run_counts("//t:f    FAILED in 0.5s\n")
        self.assertEqual(rc, 1)
        self.assertEqual(self.last_line(out),
                         "1 passed, 1 failed, 0 skipped (test cases in 1 "
                         "targets)")
        self.assertIn("expected 1, got 2", out)

    def test_failed_target_whose_xml_shows_no_failure_still_fails(self):
        # A test binary that crashed after writing a clean test.xml.
        self.xml("//t:crash", PASSING)
        rc, out = self.run_counts("//t:crash    FAILED in 0.5s\n")
        self.assertEqual(rc, 1)
        self.assertEqual(self.last_line(out),
                         "2 passed, 1 failed, 0 skipped (test cases in 1 "
                         "targets)")

    def test_flaky_is_named(self):
        self.xml("//t:flaky", PASSING)
        rc, out = self.run_counts(
            "//t:flaky    FLAKY, failed in 1 out of 2 in 3.1s\n")
        self.assertEqual(rc, 0)
        self.assertIn("FLAKY (failed, then passed on a retry): //t:flaky", out)
        self.assertEqual(self.last_line(out),
                         "2 passed, 0 failed, 0 skipped (test cases in 1 "
                         "targets)")

    def test_passed_target_without_xml_fails(self):
        rc, out = self.run_counts("//t:none    PASSED in 0.1s\n")
        self.assertEqual(rc, 1)
        self.assertIn("PASSED, but no test.xml", out)

    def test_skipped_target_counts_as_skipped(self):
        rc, out = self.run_counts("//t:skip    SKIPPED\n")
        self.assertEqual(rc, 0)
        self.assertEqual(self.last_line(out),
                         "0 passed, 0 failed, 1 skipped (test cases in 1 "
                         "targets)")

    def test_sharded_xml_files_are_all_read(self):
        for shard in ("shard_1_of_2", "shard_2_of_2"):
            d = os.path.join(self.logs, "t", "sharded", shard)
            os.makedirs(d)
            with open(os.path.join(d, "test.xml"), "w") as f:
                f.write(PASSING)
        rc, out = self.run_counts("//t:sharded    PASSED in 1.0s\n")
        self.assertEqual(rc, 0)
        self.assertTrue(self.last_line(out).startswith("4 passed, 0 failed"))

    def test_another_run_adds_its_cases_under_its_name(self):
        self.xml("//t:a", PASSING)
        other = tempfile.mkdtemp()
        d = os.path.join(other, "t", "a")
        os.makedirs(d)
        with open(os.path.join(d, "test.xml"), "w") as f:
            f.write(ONE_FAILED)
        summary = os.path.join(other, "summary.txt")
        with open(summary, "w") as f:
            f.write("//t:a    FAILED in 1.0s\n")
        rc, out = self.run_counts("//t:a    PASSED in 0.3s\n",
                                  ("--also", "asan", other, summary))
        self.assertEqual(rc, 1)
        self.assertIn("//t:a [asan]: 1 failed", out)
        self.assertEqual(self.last_line(out),
                         "3 passed, 1 failed, 0 skipped (test cases in 2 "
                         "targets)")

    def test_malformed_also_is_refused(self):
        rc, out = self.run_counts("", ("--also", "asan"))
        self.assertNotEqual(rc, 0)


if __name__ == "__main__":
    unittest.main()
