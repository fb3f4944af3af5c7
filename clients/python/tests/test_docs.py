"""The Python example of docs/clients.md and README.md (the block after
``<!-- example: python -->``) is the same in both and runs as written
against TOOLSCORE_URL, importing this checkout's package.
"""

import os
import re
import subprocess
import sys

from conftest import HERE, REPO, repo_json


def example(path, lang):
    """The fenced block after the marker in a Markdown file of the repository."""
    m = re.search(r"<!-- example: " + lang + r" -->\n```\w+\n(.*?)\n```\n", (REPO / path).read_text(encoding="utf-8"), re.S)
    assert m, f"{path} has no example block for {lang}"
    return m.group(1)


def test_the_docs_example_is_the_readmes():
    assert example("README.md", "python") == example("docs/clients.md", "python")
    assert len(example("docs/clients.md", "python").split("\n")) == 5


def test_the_docs_example_runs_and_prints_the_verdict(client):
    client.create_contract_version("flights", repo_json("examples/contracts/contract.json"))
    code = example("docs/clients.md", "python").replace('"http://localhost:8080"', repr(client.base_url))
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout
    assert out == "A PASS In the call to `reserve_seat`: drop `seat`\n"
