#!/usr/bin/env python3
"""Counts the test cases of a `bazel test` run from each target's test.xml.

  tools/test_case_counts.py BAZEL_TESTLOGS < bazel-test-output

Reads the targets from the run's summary lines (`//pkg:target ... PASSED`),
then each target's test.xml (every shard's) under BAZEL_TESTLOGS, and
prints the failed cases with their messages and the skipped cases with
their reasons, grouped by target, then one line: "P passed, F failed, S skipped (test cases in T targets)". A case is
failed when it has a <failure> or <error>, skipped when gtest marked it
skipped (result="skipped" or a <skipped> element) or did not run it, passed
otherwise; a target whose every case was skipped thus counts nothing as
passed. A target without a test.xml counts as one failed case.
Exit status 0, or 1 when any case failed.
"""

import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

SUMMARY = re.compile(r"^(//\S+)\s+(?:\(cached\) )?(PASSED|FAILED|TIMEOUT|"
                     r"FLAKY|INCOMPLETE|NO STATUS|SKIPPED)")


def cases(path):
    """(name, state, reason) of every test case in one test.xml."""
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}.{case.get('name', '')}".strip(".")
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            yield name, "failed", failure.get("message", "")
        elif (case.get("result") == "skipped" or skipped is not None or
              case.get("status") == "notrun"):
            reason = skipped.get("message", "") if skipped is not None else ""
            if not reason and skipped is not None:
                reason = (skipped.text or "").strip()
            yield name, "skipped", reason
        else:
            yield name, "passed", ""


def main():
    testlogs = sys.argv[1]
    targets = []
    for line in sys.stdin:
        m = SUMMARY.match(line)
        if m and m.group(1) not in targets:
            targets.append(m.group(1))
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    by_state = {"failed": {}, "skipped": {}}
    for target in targets:
        rel = target[2:].replace(":", "/")
        files = [os.path.join(testlogs, rel, "test.xml")]
        files = [f for f in files if os.path.exists(f)] or sorted(
            glob.glob(os.path.join(testlogs, rel, "shard_*", "test.xml")))
        if not files:
            counts["failed"] += 1
            print(f"run_tests: {target}: no test.xml (counted as failed)")
            continue
        for f in files:
            try:
                for name, state, reason in cases(f):
                    counts[state] += 1
                    if state in by_state:
                        by_state[state].setdefault(target, []).append(
                            (name, reason))
            except ET.ParseError as e:
                counts["failed"] += 1
                print(f"run_tests: {target}: unreadable {f} ({e})")
    for state, why in (("failed", "message"), ("skipped", "reason")):
        if not by_state[state]:
            continue
        print(f"run_tests: {state} test cases, by target:")
        for target, listed in by_state[state].items():
            print(f"  {target}: {len(listed)} {state}")
            for name, reason in listed:
                reason = " ".join(reason.split())[:200]
                print(f"    {name}: {reason or f'(no {why} given)'}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped (test cases in {len(targets)} "
          "targets)")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
