#!/usr/bin/env python3
"""experiments/validation/validate_published.py with the real predict: the
shipped validation set predicted row by row with its summary and pairs, a
made-up result's units converted and its prediction checked against predict
run by hand, ties not counted as ranked right, and bad files refused naming
the file, the line and the key."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""), "ringside")
if not os.path.isdir(RUNFILES):  # run by hand from the checkout
    RUNFILES = os.path.join(os.path.dirname(__file__), "..", "..", "..")
SCRIPT = os.path.join(RUNFILES, "experiments", "validation",
                      "validate_published.py")
VALIDATION = os.path.join(RUNFILES, "experiments", "validation")
PREDICT = os.path.join(RUNFILES, "experiments", "predict")
if not os.path.exists(PREDICT):
    PREDICT = os.path.join(RUNFILES, "bazel-bin", "experiments", "predict")

RESULT = """title = made up
url = https://example.invalid/
where = Table 1
hardware = two nodes of two GPUs
strategy = ring
model = ResNet-50
profile = resnet50
batch_per_gpu = 32
gpus_per_node = 2
intra_node_link = nvlink
inter_node_link = tcp
unit = {unit}
intra_node_gbit = 800
intra_node_latency_us = 2
inter_node_gbit = 10
inter_node_latency_us = 20
{rows}
"""


def run(directory, *extra):
    return subprocess.run(
        [sys.executable, SCRIPT, f"--predict={PREDICT}", f"--dir={directory}",
         *extra], capture_output=True, text=True, timeout=600)


class ValidatePublishedTest(unittest.TestCase):

    def test_the_shipped_set_is_predicted_row_by_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "v.json")
            p = run(VALIDATION, f"--json_out={out}")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
        results = [f for f in os.listdir(VALIDATION) if f.endswith(".result")]
        self.assertGreaterEqual(len(results), 10)
        predicted = {row["file"] for row in doc["rows"]}
        self.assertEqual(predicted, set(results))
        for row in doc["rows"]:
            self.assertGreater(row["predicted_ms"], 0, row)
            self.assertGreater(row["measured_ms"], 0, row)
            self.assertGreater(row["gpus"], 1, row)
        self.assertGreaterEqual(len(doc["pairs"]), 2)
        self.assertIn("| all |", p.stdout)
        self.assertRegex(p.stdout, r"median \|error\| \d+\.\d%, max \d+\.\d%")

    def test_units_convert_and_match_predict_by_hand(self):
        with tempfile.TemporaryDirectory() as tmp:
            # 100 samples/s per GPU at batch 32: 320 ms a step.
            with open(os.path.join(tmp, "a.result"), "w") as f:
                f.write(RESULT.format(unit="samples/s per GPU",
                                      rows="row = 1 100\nrow = 4 90"))
            out = os.path.join(tmp, "v.json")
            p = run(tmp, f"--json_out={out}")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                (row,) = json.load(f)["rows"]
            self.assertAlmostEqual(row["input_ms"], 320.0)
            self.assertAlmostEqual(row["measured_ms"], 1e3 * 32 / 90)
            # predict by hand on the same cluster.
            cluster = os.path.join(tmp, "c.cluster")
            with open(cluster, "w") as f:
                f.write("nodes = 2\ngpus_per_node = 2\nintra_node_gbit = 800\n"
                        "intra_node_latency_us = 2\ninter_node_gbit = 10\n"
                        "inter_node_latency_us = 20\ncompute_ms = 320\n"
                        "profile = resnet50\nbatch_size = 32\n")
            hand = os.path.join(tmp, "p.json")
            subprocess.run([PREDICT, f"--cluster={cluster}",
                            "--strategies=ring", f"--json_out={hand}"],
                           check=True, capture_output=True, timeout=120)
            with open(hand) as f:
                (at4,) = [q for q in json.load(f)["predictions"]
                          if q["workers"] == 4]
            self.assertAlmostEqual(row["predicted_ms"], at4["step_s"] * 1e3)
            self.assertAlmostEqual(
                row["error"], (at4["step_s"] * 1e3 - row["measured_ms"]) /
                row["measured_ms"])

    def test_an_input_not_on_one_gpu_is_said(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "a.result"), "w") as f:
                f.write(RESULT.format(unit="samples/s total",
                                      rows="row = 2 200\nrow = 4 380"))
            p = run(tmp)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("a.result: t_c is 2 GPUs' step", p.stdout)

    def test_a_tie_is_not_ranked_right(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, other, value in (("a", "b", 200), ("b", "a", 300)):
                with open(os.path.join(tmp, f"{name}.result"), "w") as f:
                    f.write(RESULT.format(
                        unit="samples/s total",
                        rows=f"row = 1 100\nrow = 4 {value}\n"
                             f"pair = {other}.result"))
            out = os.path.join(tmp, "v.json")
            p = run(tmp, f"--json_out={out}")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                (pair,) = json.load(f)["pairs"]
            self.assertEqual(pair["measured_faster"], "b.result")
            self.assertEqual(pair["predicted_faster"], "tie")
            self.assertFalse(pair["agree"])
            self.assertIn("pairs ranked right: 0 of 1", p.stdout)

    def test_bad_files_name_the_file_line_and_key(self):
        good = RESULT.format(unit="samples/s total",
                             rows="row = 1 100\nrow = 4 300")
        cases = [
            (good.replace("unit = samples/s total", "unit = furlongs"),
             "key 'unit': 'furlongs' is not one of"),
            (good.replace("row = 4 300", "row = four 300"),
             "a.result:18: key 'row': 'four 300' is not"),
            (good.replace("row = 4 300", ""), "needs at least two rows"),
            (good.replace("model = ResNet-50", "modle = ResNet-50"),
             "a.result:6: key 'modle': unknown"),
            (good.replace("gpus_per_node = 2\n", ""),
             "key 'gpus_per_node' is missing"),
            (good + "title = again\n", "key 'title': given twice"),
        ]
        for text, message in cases:
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "a.result"), "w") as f:
                    f.write(text)
                p = run(tmp)
                self.assertEqual(p.returncode, 2, message)
                self.assertIn(message, p.stderr)


if __name__ == "__main__":
    unittest.main()
