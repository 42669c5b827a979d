#!/usr/bin/env python3
"""Packs built CUDA binaries into one self-contained archive for a GPU machine
that has a driver and CUDA's runtime but no Bazel, no network and none of
ringside's Debian libraries (tools/gpu_bundle.sh builds, then calls this).

  tools/gpu_bundle.py --bazel_bin=DIR --out=FILE.tar.xz --commit=REV LABEL...

For each label (//pkg:name) it copies bazel-bin/pkg/name and its runfiles
tree, every link followed, into bin/pkg/name(.runfiles); drops the runfiles
manifests (they name this machine's absolute paths, so the runfiles library
falls back to the directory); copies every shared library the binaries load
that the target machine may lack into lib/: all but glibc's own, the C++
runtime (libstdc++, libgcc_s: the target's newer ones serve, and an older
one first on LD_LIBRARY_PATH would break the target's Python) and CUDA's
(libcudart, libcublas*, libnccl: the target's toolkit or its PyTorch wheels
carry them; tools/gpu_check.sh --bundle finds them there). Identical files
become hard links, so the archive holds each binary once. manifest.txt names
the commit, the labels and the libraries.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

# Libraries the target machine brings itself (sonames, as regexes).
TARGET_PROVIDES = re.compile(
    r"^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|"
    r"libutil\.|libresolv\.|libstdc\+\+\.|libgcc_s\.|libcuda\.|libcudart\.|"
    r"libcublas|libnccl\.)")


def copy_target(bazel_bin, label, stage):
    """Copies one binary and its runfiles; returns the binary's bundle path."""
    match = re.fullmatch(r"//([^:]*):(.+)", label)
    if not match:
        sys.exit(f"gpu_bundle: not a label: {label}")
    rel = os.path.join(match.group(1), match.group(2))
    src = os.path.join(bazel_bin, rel)
    if not os.access(src, os.X_OK):
        sys.exit(f"gpu_bundle: {label} is not built at {src}")
    dst = os.path.join(stage, "bin", rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(src, dst)
    runfiles = src + ".runfiles"
    if os.path.isdir(runfiles):
        copy_runfiles(runfiles, dst + ".runfiles")
    return dst


def copy_runfiles(src, dst):
    """Copies a runfiles tree, links followed, without its MANIFEST. A link
    that dangles (an output base shared with another checkout keeps that
    checkout's source links until an action rewrites them) is taken from
    this workspace at the same path."""
    for root, dirs, files in os.walk(src, followlinks=True):
        rel_root = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel_root), exist_ok=True)
        for name in files:
            rel = os.path.normpath(os.path.join(rel_root, name))
            if rel == "MANIFEST":
                continue
            path = os.path.join(root, name)
            # A source file (a link out of bazel-out) comes from this
            # workspace: the link may name another checkout's copy.
            if os.path.islink(path) and "/bazel-out/" not in os.readlink(path):
                workspace_rel = rel.split(os.sep, 1)[-1]
                if rel.startswith("ringside" + os.sep) and os.path.exists(
                        workspace_rel):
                    path = workspace_rel
            if not os.path.exists(path):
                workspace_rel = rel.split(os.sep, 1)[-1]
                if rel.startswith("ringside" + os.sep) and os.path.exists(
                        workspace_rel):
                    path = workspace_rel
                else:
                    sys.exit(f"gpu_bundle: {path} dangles")
            shutil.copy2(path, os.path.join(dst, rel))


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def needed_libraries(paths):
    """soname -> resolved path for every library ldd finds, missing ones
    reported as an error (a bundle that cannot start is no bundle)."""
    found, missing = {}, set()
    for path in paths:
        out = subprocess.run(["ldd", path], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            m = re.match(r"\s*(\S+) => (\S+|not found)", line)
            if not m:
                continue
            soname, where = m.groups()
            if TARGET_PROVIDES.match(soname):
                continue
            if where == "not found":
                missing.add(f"{soname} (needed by {path})")
            else:
                found[soname] = where
    if missing:
        sys.exit("gpu_bundle: libraries not found here: " +
                 ", ".join(sorted(missing)))
    return found


def link_duplicates(stage):
    """Replaces files of equal content by hard links to one of them."""
    seen, saved = {}, 0
    for root, _, files in os.walk(stage):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            digest = hashlib.sha256()
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            key = (os.path.getsize(path), digest.hexdigest())
            if key in seen:
                mode = os.stat(path).st_mode
                os.remove(path)
                os.link(seen[key], path)
                os.chmod(path, mode)
                saved += key[0]
            else:
                seen[key] = path
    return saved


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bazel_bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="unknown")
    parser.add_argument("labels", nargs="+")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        stage = os.path.join(tmp, "ringside_gpu")
        binaries = [copy_target(args.bazel_bin, label, stage)
                    for label in args.labels]
        elves = []
        for root, _, files in os.walk(os.path.join(stage, "bin")):
            for name in files:
                path = os.path.join(root, name)
                if os.access(path, os.X_OK) and is_elf(path):
                    elves.append(path)
        libraries = needed_libraries(elves)
        os.makedirs(os.path.join(stage, "lib"))
        for soname, where in sorted(libraries.items()):
            shutil.copy2(where, os.path.join(stage, "lib", soname))
        for path in elves:  # debug info is most of their bytes
            subprocess.run(["strip", "--strip-debug", path], check=True)
        saved = link_duplicates(stage)
        with open(os.path.join(stage, "manifest.txt"), "w") as f:
            f.write(f"commit {args.commit}\n")
            for label, path in zip(args.labels, binaries):
                f.write(f"binary {label} {os.path.relpath(path, stage)}\n")
            for soname in sorted(libraries):
                f.write(f"library {soname}\n")
        with tarfile.open(args.out, "w:xz") as tar:
            tar.add(stage, arcname="ringside_gpu")
    print(f"gpu_bundle: wrote {args.out} ({os.path.getsize(args.out) / 2**20:.1f}"
          f" MiB): {len(args.labels)} binaries, {len(libraries)} libraries,"
          f" {saved / 2**20:.0f} MiB of duplicates linked")


if __name__ == "__main__":
    main()
