#!/usr/bin/env python3
"""tools/between_markers.py on files it makes up: the content between the
markers replaced (the rest kept byte for byte), --whole taking the markers
from the content, and a file or content without its markers refused naming
them, the file left as it was."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.environ.get("TEST_SRCDIR", ""), "ringside", "tools",
                      "between_markers.py")
if not os.path.exists(SCRIPT):  # run by hand from the checkout
    SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                          "between_markers.py")


class BetweenMarkersTest(unittest.TestCase):
    def run_on(self, text, content, *flags, name="results:t"):
        with tempfile.TemporaryDirectory() as d:
            path, new = os.path.join(d, "f.md"), os.path.join(d, "c.md")
            with open(path, "w") as f:
                f.write(text)
            with open(new, "w") as f:
                f.write(content)
            r = subprocess.run([sys.executable, SCRIPT, path, name, new,
                                *flags], capture_output=True, text=True)
            with open(path) as f:
                return r, f.read()

    def test_replaces_between_the_markers(self):
        text = "a\n<!-- results:t -->\nold\n<!-- /results:t -->\nb\n"
        r, out = self.run_on(text, "\nnew table\n\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(out, "a\n<!-- results:t -->\nnew table\n"
                              "<!-- /results:t -->\nb\n")

    def test_whole_takes_the_markers_from_the_content(self):
        text = "a\n<!-- s -->\n## 7\nold\n<!-- /s -->\n\nb\n"
        r, out = self.run_on(text, "<!-- s -->\n## 7\nnew\n<!-- /s -->\n",
                             "--whole", name="s")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(out, "a\n<!-- s -->\n## 7\nnew\n<!-- /s -->\n\nb\n")

    def test_missing_markers_are_refused_and_the_file_kept(self):
        r, out = self.run_on("no markers\n", "x")
        self.assertEqual(r.returncode, 1)
        self.assertIn("lacks the <!-- results:t -->", r.stderr)
        self.assertEqual(out, "no markers\n")
        text = "<!-- s -->old<!-- /s -->"
        r, out = self.run_on(text, "no markers", "--whole", name="s")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(out, text)


if __name__ == "__main__":
    unittest.main()
