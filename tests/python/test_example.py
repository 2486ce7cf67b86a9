"""examples/python/run_model.py runs and checks its own result against numpy."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "python", "run_model.py")


def test_example_runs():
    out = subprocess.run([sys.executable, EXAMPLE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=120)
    assert out.returncode == 0, out.stdout
    assert "matches numpy" in out.stdout
