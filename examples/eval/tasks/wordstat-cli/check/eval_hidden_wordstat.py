import subprocess
import sys
import tempfile
from pathlib import Path

folder = Path(tempfile.mkdtemp())
sample = folder / "sample.txt"
sample.write_text("the cat sat\non the mat\nThe end\n")


def wordstat(*args):
    return subprocess.run([sys.executable, "wordstat.py", *args], capture_output=True, text=True, timeout=30)


out = wordstat(str(sample))
assert out.returncode == 0, out.stderr
assert out.stdout.strip() == "lines=3 words=8 chars=31", out.stdout
out = wordstat(str(sample), "--top", "2")
assert out.returncode == 0, out.stderr
lines = out.stdout.strip().splitlines()
assert lines[0].split() == ["the", "3"], lines
assert len(lines) == 2, lines
out = wordstat(str(folder / "missing.txt"))
assert out.returncode == 1, (out.returncode, out.stdout)
assert out.stderr.strip(), "the error goes to stderr"
print("hidden check: ok")
