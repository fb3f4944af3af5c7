"""API keys against the real server: no key is 401, a key without the route's
scope is 403 naming it, a revoked key is refused at once; keys are made,
listed and revoked with the bootstrap admin key.
"""

import pytest

from conftest import RUN_TAG
from toolscore_client import Client, ToolscoreError


def test_no_key_is_unauthorized(client, admin_key):
    with pytest.raises(ToolscoreError) as e:
        Client(client.base_url).stats()
    assert (e.value.status, e.value.slug, e.value.errors[0].parameter) == (401, "unauthorized", "Authorization")
    with pytest.raises(ToolscoreError) as e:
        Client(client.base_url, api_key="tsk_not_a_key").stats()
    assert e.value.status == 401
    assert isinstance(client.stats()["groups"], list)


def test_a_read_only_key_is_forbidden_to_ingest_and_revoked_is_refused(client, admin_key):
    admin = Client(client.base_url, api_key=admin_key)
    made = admin.create_key(["read"], name=f"read-only-{RUN_TAG}")
    assert (made["scopes"], made["project"], made["token"].startswith("tsk_")) == (["read"], "default", True)
    reader = Client(client.base_url, api_key=made["token"])
    reader.stats()
    with pytest.raises(ToolscoreError) as e:
        reader.evaluate(contract="flights", trace=[], store=False)
    assert (e.value.status, e.value.slug, e.value.missing_scope) == (403, "forbidden", "ingest")
    with pytest.raises(ToolscoreError) as e:
        admin.stats()
    assert e.value.missing_scope == "read"

    listed = [k for k in admin.list_keys() if k["id"] == made["id"]]
    assert [(k["name"], k.get("revoked_at")) for k in listed] == [(f"read-only-{RUN_TAG}", None)]
    assert admin.revoke_key(made["id"])["revoked_at"]
    with pytest.raises(ToolscoreError) as e:
        reader.stats()
    assert e.value.status == 401
