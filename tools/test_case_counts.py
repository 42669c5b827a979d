#!/usr/bin/env python3
"""Counts the test cases of a `bazel test` run, target by target.

  tools/test_case_counts.py BAZEL_TESTLOGS < bazel-test-output
      [--also NAME TESTLOGS OUTPUT_FILE ...]

Each --also adds another `bazel test` run of the same checkout (e.g. the
AddressSanitizer build's, NAME "asan"): its targets are counted as
"TARGET [NAME]", into the same totals.

Reads each target's status from the run's summary lines (`//pkg:target
... PASSED in 0.4s`, `(cached) PASSED`, `FAILED`, `FLAKY, failed in 1 out
of 2`, `TIMEOUT`, `INCOMPLETE`, `NO STATUS`, `FAILED TO BUILD`,
`SKIPPED`). Bazel's status decides; a test.xml is read only where it
belongs to this run's result:

- PASSED, FLAKY and FAILED: every case of the target's test.xml (every
  shard's): failed when it has a <failure> or <error>, skipped when gtest
  marked it skipped (result="skipped", a <skipped> element, or
  status="notrun"), passed otherwise. A target whose every case was skipped
  thus counts nothing as passed. A FAILED target whose test.xml names no
  failed case counts one failed case more; a PASSED or FLAKY one without
  a test.xml counts as one failed case. FLAKY targets are named as such.
- TIMEOUT, INCOMPLETE, NO STATUS and FAILED TO BUILD: one failed case,
  whatever test.xml an earlier run left behind (it would be stale).
- SKIPPED (Bazel did not run it): one skipped case.

Prints the failed cases with their messages, the skipped cases with their
reasons and the flaky targets, grouped by target, then one line:
"P passed, F failed, S skipped (test cases in T targets)".
Exit status 0, or 1 when any case failed.
"""

import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

# The longer statuses first: "FAILED TO BUILD" is not "FAILED".
STATUSES = ("FAILED TO BUILD", "NO STATUS", "PASSED", "FAILED", "TIMEOUT",
            "FLAKY", "INCOMPLETE", "SKIPPED")
SUMMARY = re.compile(r"^(//\S+)\s+(?:\(cached\) )?(" +
                     "|".join(re.escape(s) for s in STATUSES) + r")\b")
# Statuses whose test.xml, if any, is not this run's.
NO_RESULT = {
    "FAILED TO BUILD": "it failed to build",
    "NO STATUS": "Bazel gave it no status (not run)",
    "TIMEOUT": "it timed out",
    "INCOMPLETE": "it did not finish",
}


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


def statuses(lines):
    """{target: status} from the summary lines, in their order; a target
    listed twice keeps its last status."""
    found = {}
    for line in lines:
        m = SUMMARY.match(line)
        if m:
            found.pop(m.group(1), None)
            found[m.group(1)] = m.group(2)
    return found


def xml_files(testlogs, target):
    rel = target[2:].replace(":", "/")
    whole = os.path.join(testlogs, rel, "test.xml")
    if os.path.exists(whole):
        return [whole]
    return sorted(glob.glob(os.path.join(testlogs, rel, "shard_*",
                                         "test.xml")))


def count(testlogs, found):
    """(counts, listed, flaky): counts by state; listed[state][target] =
    [(case, reason)] for the failed and skipped cases; the flaky targets."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    listed = {"failed": {}, "skipped": {}}
    flaky = []

    def add(target, state, name, reason):
        counts[state] += 1
        if state in listed:
            listed[state].setdefault(target, []).append((name, reason))

    for target, status in found.items():
        if status in NO_RESULT:
            add(target, "failed", target, f"{status}: {NO_RESULT[status]}")
            continue
        if status == "SKIPPED":
            add(target, "skipped", target, "SKIPPED: Bazel did not run it")
            continue
        if status == "FLAKY":
            flaky.append(target)
        files = xml_files(testlogs, target)
        if not files:
            add(target, "failed", target, f"{status}, but no test.xml")
            continue
        failed_before = counts["failed"]
        for f in files:
            try:
                for name, state, reason in cases(f):
                    add(target, state, name, reason)
            except ET.ParseError as e:
                add(target, "failed", target, f"unreadable {f} ({e})")
        if status == "FAILED" and counts["failed"] == failed_before:
            add(target, "failed", target,
                "FAILED, but its test.xml names no failed case")
    return counts, listed, flaky


def parse_runs(argv):
    """[(suffix, testlogs, summary lines)]: the run on stdin first, then
    each --also NAME TESTLOGS OUTPUT_FILE."""
    if not argv:
        sys.exit("usage: test_case_counts.py BAZEL_TESTLOGS < output "
                 "[--also NAME TESTLOGS OUTPUT_FILE ...]")
    runs = [("", argv[0], sys.stdin.read().splitlines())]
    rest = argv[1:]
    while rest:
        if rest[0] != "--also" or len(rest) < 4:
            sys.exit(f"test_case_counts.py: expected --also NAME TESTLOGS "
                     f"OUTPUT_FILE, got {' '.join(rest)}")
        _, name, testlogs, output = rest[:4]
        with open(output, encoding="utf-8", errors="replace") as f:
            runs.append((f" [{name}]", testlogs, f.read().splitlines()))
        rest = rest[4:]
    return runs


def main():
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    listed = {"failed": {}, "skipped": {}}
    flaky = []
    targets = 0
    for suffix, testlogs, lines in parse_runs(sys.argv[1:]):
        found = statuses(lines)
        targets += len(found)
        run_counts, run_listed, run_flaky = count(testlogs, found)
        for state in counts:
            counts[state] += run_counts[state]
        for state in listed:
            for target, cases_of in run_listed[state].items():
                listed[state][target + suffix] = cases_of
        flaky += [t + suffix for t in run_flaky]
    for state, why in (("failed", "message"), ("skipped", "reason")):
        if not listed[state]:
            continue
        print(f"run_tests: {state} test cases, by target:")
        for target, cases_of in listed[state].items():
            print(f"  {target}: {len(cases_of)} {state}")
            for name, reason in cases_of:
                reason = " ".join(reason.split())[:200]
                print(f"    {name}: {reason or f'(no {why} given)'}")
    if flaky:
        print("run_tests: FLAKY (failed, then passed on a retry): " +
              ", ".join(flaky))
    print(f"{counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped (test cases in {targets} "
          "targets)")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
