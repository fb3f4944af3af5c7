"""Writes python-results.json: Python Toolscore 1.8.1's grades of the pairs
below (run from this folder, with Toolscore 1.8.1 on PYTHONPATH; see
README.md). TestPythonToolscoreExamples compares toolscore's with them."""

import glob
import json

from toolscore import evaluate_trace

TRACES = ["trace_openai.json", "trace_anthropic.json", "trace_custom.json"] + sorted(
    glob.glob("traces_with_errors/*.json")
)
GOLDS = ["gold_calls.json"] + sorted(glob.glob("datasets/*.json"))

pairs = [("gold_calls.json", t, "auto") for t in TRACES]
pairs += [
    ("gold_calls.json", "trace_openai.json", "openai"),
    ("gold_calls.json", "trace_anthropic.json", "anthropic"),
    ("gold_calls.json", "trace_custom.json", "custom"),
]
# Every gold file read as a trace (a list of calls, Python's custom format),
# against itself and against every other gold file.
pairs += [(g, t, "auto") for g in GOLDS for t in GOLDS]

out = []
for gold, trace, fmt in pairs:
    r = evaluate_trace(gold, trace, format=fmt, validate_side_effects=False)
    m = r.metrics
    out.append(
        {
            "gold": gold,
            "trace": trace,
            "format": fmt,
            "calls": len(r.trace_calls),
            "score": r.score,
            "grade": r.grade,
            "selection_accuracy": m["selection_accuracy"],
            "invocation_accuracy": m["invocation_accuracy"],
            "argument_f1": m["argument_metrics"]["f1"],
            "sequence_accuracy": m["sequence_metrics"]["sequence_accuracy"],
            "redundant_rate": m["efficiency_metrics"]["redundant_rate"],
        }
    )
with open("python-results.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
