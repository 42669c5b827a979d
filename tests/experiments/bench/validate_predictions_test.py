#!/usr/bin/env python3
"""experiments/bench/validate_predictions.py's pure parts: the draws stay
within their bounds, and the statistics are the textbook ones."""

import importlib.util
import os
import random
import unittest

SCRIPT = os.path.join(os.environ.get("TEST_SRCDIR", ""), "ringside",
                      "experiments", "bench", "validate_predictions.py")
if not os.path.exists(SCRIPT):  # run by hand from the checkout
    SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                          "experiments", "bench", "validate_predictions.py")
spec = importlib.util.spec_from_file_location("vp", SCRIPT)
vp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vp)


class DrawTest(unittest.TestCase):
    def test_draws_stay_within_their_bounds(self):
        rng = random.Random(7)
        profiles = set()
        for _ in range(300):
            c = vp.draw(rng, 0.15)
            self.assertGreaterEqual(c["link_gbit"], 0.05 * 0.999)
            self.assertLessEqual(c["link_gbit"], 10 * 1.001)
            self.assertIn(c["latency_us"], range(0, 2001))
            self.assertIn(c["workers"], (2, 3, 4))
            self.assertIn(c["servers"], (1, 2, 3, 4))
            self.assertIn(c["accumulate_steps"], (1, 2))
            # The model's bytes take at most about max_link_s on the link
            # (a mix's floor of 4096 elements aside).
            self.assertLessEqual(c["link_s"],
                                 0.15 * 1.05 + 16384 * 8 / (c["link_gbit"] * 1e9))
            self.assertGreater(c["compute_ms"], 0)
            profiles.add(c["profile"].split(":")[0])
        self.assertIn("tensors", profiles)
        self.assertTrue(profiles & set(vp.PROFILES))

    def test_the_same_seed_draws_the_same(self):
        a = [vp.draw(random.Random(3), 0.1) for _ in range(1)]
        b = [vp.draw(random.Random(3), 0.1) for _ in range(1)]
        self.assertEqual(a, b)

    def test_tensor_mix_sums_to_its_elements(self):
        spec, total = vp.tensor_mix(random.Random(1), 1e6)
        sizes = [int(x) for x in spec[len("tensors:"):].split(",")]
        self.assertEqual(sum(sizes), total)
        self.assertGreaterEqual(len(sizes), 3)
        self.assertTrue(all(s >= 16 for s in sizes))

    def test_compare_args_carry_the_configuration(self):
        c = vp.draw(random.Random(5), 0.1)
        args = vp.compare_args(c, "/tmp/x", ["baseline", "ring"])
        self.assertIn(f"--link_gbit={c['link_gbit']}", args)
        self.assertIn(f"--workers={c['workers']}", args)
        self.assertIn("--strategies=baseline,ring", args)
        self.assertIn("--noddp", args)
        # Worker flags after "--".
        self.assertGreater(args.index(f"--ring_bucket_kb={c['ring_bucket_kb']}"),
                           args.index("--"))

    def test_real_draws_fit_the_cores_and_run_the_mlp(self):
        rng = random.Random(11)
        for _ in range(50):
            c = vp.draw_real(rng)
            widths = [int(w) for w in c["mlp_widths"].split(",")]
            self.assertEqual((widths[0], widths[-1]), (64, 10))
            self.assertIn(len(widths), (3, 4, 5))
            self.assertEqual(c["workers"], 2)  # one thread each: 2 cores
        args = vp.compare_args_real(c, "/tmp/x", ["baseline", "ring"])
        self.assertIn("--model=mlp", args)
        self.assertNotIn("--link_gbit", " ".join(args))
        self.assertGreater(args.index(f"--mlp_widths={c['mlp_widths']}"),
                           args.index("--"))


class StatisticsTest(unittest.TestCase):
    def test_spearman(self):
        self.assertAlmostEqual(vp.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1)
        self.assertAlmostEqual(vp.spearman([1, 2, 3, 4], [4, 3, 2, 1]), -1)
        self.assertAlmostEqual(vp.spearman([1, 2, 3], [1, 3, 2]), 0.5)
        self.assertIsNone(vp.spearman([1], [1]))
        self.assertIsNone(vp.spearman([1, 1], [1, 2]))
        self.assertEqual(vp.ranks([5, 1, 5, 3]), [3.5, 1, 3.5, 2])

    def test_percentile(self):
        self.assertEqual(vp.percentile([3, 1, 2], 0.5), 2)
        self.assertAlmostEqual(vp.percentile([0, 10], 0.9), 9)
        self.assertIsNone(vp.percentile([], 0.5))

    def test_fastest_agrees_within_the_spread(self):
        # (strategy, predicted, measured, runs)
        rows = [("a", 1.0, 2.0, [2.0, 2.2]), ("b", 1.5, 1.9, [1.8, 2.1])]
        self.assertTrue(vp.fastest_agrees(rows))   # 2.0 <= 2.1
        rows = [("a", 1.0, 2.5, [2.5]), ("b", 1.5, 1.9, [1.8, 2.1])]
        self.assertFalse(vp.fastest_agrees(rows))  # 2.5 > 2.1
        self.assertIsNone(vp.fastest_agrees(rows[:1]))

    def test_summary_separates_core_bound_rows(self):
        # (strategy, predicted, measured, runs, core_share)
        first = [("ring", 1.1, 1.0, [1.0], 0.3), ("sps", 2.0, 2.0, [2.0], None)]
        second = [("ring", 0.7, 1.0, [1.0], 0.95), ("sps", 2.0, 2.0, [2.0], 0.5)]
        text = "\n".join(vp.summarize([({}, first), ({}, second)]))
        self.assertIn("### All rows: 4", text)
        self.assertIn("| ring | 2 | 20.0% | 28.0% |", text)
        self.assertIn("### link-bound rows: 3", text)
        self.assertIn("### core-bound rows: 1", text)
        self.assertIn("| ring | 1 | 30.0% | 30.0% |", text)
        # The fastest agrees in the first (sps is not faster) and the
        # second (ring is predicted and measured fastest).
        self.assertIn("2 of 2 configurations (100%)", text)
    def test_rows_of_keeps_the_core_bound_rows_compare_leaves_out(self):
        def run(strategy, counted, not_counted, share):
            return {"strategy": strategy, "workers": 2, "counted": counted,
                    "not_counted": not_counted, "predicted_step_s": 1.0,
                    "measured_step_s": 1.1, "core_share": share}
        report = {"cost_model": {"runs": [
            run("ring", True, None, 0.3),
            run("zero2", False, "outside the model's domain: core-bound, its "
                "predicted CPU demand keeps 95% of the 2 cores busy", 0.95),
            run("sps", False, "outside the model's domain: 2 worker(s) × 1 "
                "compute thread(s) + 1 server(s) on 2 cores", 0.5),
            run("fusion", True, None, 0.2) | {"workers": 4}]}}
        self.assertEqual([r[0] for r in vp.rows_of(report, 2)],
                         ["ring", "zero2"])
        self.assertEqual(vp.rows_of(report, 2)[1][4], 0.95)


if __name__ == "__main__":
    unittest.main()
