"""A client for the toolscore grading service, standard library only.

>>> from toolscore_client import Client  # doctest: +SKIP
>>> client = Client("http://localhost:8080", api_key="tsk_...")  # doctest: +SKIP
>>> result = client.evaluate(contract="flights", trace=messages)  # doctest: +SKIP
>>> result["grade"], result["passed"]  # doctest: +SKIP
('A', True)

Results are the JSON objects of the service's openapi.yaml, as dicts.
Calls carry an Idempotency-Key reused on retries, retry 429 and 503 as
the server's Retry-After says within a bounded budget, and raise
:class:`ToolscoreError` with the server's problem+json otherwise.
"""

from .adapters import to_trace, trace_format
from .client import (
    MAX_BATCH_ITEMS,
    PROBLEM_TYPE_BASE,
    Client,
    FieldProblem,
    Problem,
    RetryEvent,
    RetryPolicy,
    ToolscoreError,
    parse_retry_after,
)

__version__ = "0.1.0"

__all__ = [
    "MAX_BATCH_ITEMS",
    "PROBLEM_TYPE_BASE",
    "Client",
    "FieldProblem",
    "Problem",
    "RetryEvent",
    "RetryPolicy",
    "ToolscoreError",
    "parse_retry_after",
    "to_trace",
    "trace_format",
]
