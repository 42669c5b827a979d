#!/usr/bin/env python3
"""Replaces the part of a file between its markers, as tools/make_results.sh
regenerates a section of docs/RESULTS.md or a table the README quotes.

  tools/between_markers.py FILE NAME CONTENT_FILE [--whole]

The markers are "<!-- NAME -->" and "<!-- /NAME -->". Without --whole the
content (stripped) goes between them on lines of its own; with --whole
CONTENT_FILE holds the markers itself and replaces them and what lies
between. Exit 1, naming FILE and NAME, when FILE lacks either marker (or,
with --whole, CONTENT_FILE does).
"""
import sys


def replaced(text, name, content, whole):
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    if begin not in text or end not in text:
        return None
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    if whole:
        return head + content.rstrip("\n") + tail
    return head + begin + "\n" + content.strip() + "\n" + end + tail


def main(argv):
    whole = "--whole" in argv[1:]
    args = [a for a in argv[1:] if a != "--whole"]
    if len(args) != 3:
        sys.exit(__doc__)
    path, name, content_path = args
    with open(content_path, encoding="utf-8") as f:
        content = f.read()
    if whole and (f"<!-- {name} -->" not in content or
                  f"<!-- /{name} -->" not in content):
        print(f"between_markers: {content_path} lacks its <!-- {name} --> "
              "markers", file=sys.stderr)
        return 1
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = replaced(text, name, content, whole)
    if new is None:
        print(f"between_markers: {path} lacks the <!-- {name} --> ... "
              f"<!-- /{name} --> markers", file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
