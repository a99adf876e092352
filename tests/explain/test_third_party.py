"""A controller the wiretap has no data about, on the committed wide session
(recordings/wide-session.jsonl.gz): the greeter (scripts/greeter_operator.py), a small
operator written with the Python kubernetes client, which writes a ConfigMap for each
Greeting. kube/data/agents.yaml names it by its User-Agent; kube/data/controllers.yaml has
no entry for it, so the cause of its writes must come from the watch events its own watches
received. Exchanges are found by what they are (who, verb, resource, name), as
`k8s-wiretap explain --format json` shows them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.explain_coverage import RECORDING
from k8s_wiretap.kube.controllers import client, clients
from tests.conftest import cli

AGENT = "greeter-operator/1.0 (python kubernetes client)"
CONFIGMAP = "shop/greeting-hello"
GREETING = "greetings.workshop.example.com shop/hello"

Line = dict[str, Any]


@pytest.fixture(scope="module")
def lines() -> list[Line]:
    result = cli("explain", str(RECORDING), "--format", "json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture(scope="module")
def operator(lines: list[Line]) -> list[Line]:
    """The greeter's exchanges, found by the User-Agent it sends."""
    found = [line for line in lines if line["user_agent"] == AGENT]
    assert found
    return found


def writes(operator: list[Line], verb: str) -> list[Line]:
    return [
        line
        for line in operator
        if line["verb"] == verb
        and line["resource"] == "configmaps"
        and line["status"] in (200, 201)
        and line["response_body"]["metadata"]["name"] == "greeting-hello"
    ]


def test_the_operator_is_unknown_to_the_controller_data() -> None:
    """The premise: nothing in controllers.yaml describes the greeter."""
    assert client("greeter-operator") is None
    assert not [name for name in clients() if "greeter" in name]


def test_every_request_of_the_operator_is_attributed_to_it(operator: list[Line]) -> None:
    for line in operator:
        assert line["who"]["component"] == "greeter-operator", line["id"]
        assert line["who"]["how"] == "user agent"
        assert line["who"]["client"] == "greeter-operator 1.0"
    verbs = {(line["verb"], line["resource"]) for line in operator}
    assert {("watch", "greetings"), ("create", "configmaps"), ("patch", "configmaps")} <= verbs


def test_its_configmap_writes_are_explained(operator: list[Line]) -> None:
    """Its create (the Greeting ADDED) and its merge patch (the Greeting changed) say who
    wrote which ConfigMap, and how."""
    (create,) = writes(operator, "create")
    (patch,) = writes(operator, "patch")
    said = "greeter-operator (a third-party client)"
    assert create["summary"] == f"{said} creates ConfigMap {CONFIGMAP}"
    assert patch["summary"] == f"{said} patches ConfigMap {CONFIGMAP}"
    assert create["rule"] == patch["rule"] == "third-party-write"
    assert "the ADDED of Greeting shop/hello" in create["why"]
    assert "the MODIFIED of Greeting shop/hello after kubectl's patch" in patch["why"]
    assert patch["request_body"]["data"] == {"message": "bonjour"}


def test_its_writes_are_caused_by_the_greetings_watch_events(
    lines: list[Line], operator: list[Line]
) -> None:
    """The create follows the Greeting's ADDED, the patch its MODIFIED, each delivered on
    the greeter's own watch of Greetings."""
    by_id = {line["id"]: line for line in lines}
    for verb, event_type in (("create", "ADDED"), ("patch", "MODIFIED")):
        (write,) = writes(operator, verb)
        cause = write["caused_by"]
        assert cause is not None, f"the {verb} has no cause"
        event = cause["event"]
        assert (event["type"], event["object"], event["watcher"]) == (
            event_type,
            GREETING,
            "greeter-operator",
        )
        watch = by_id[event["watch"]]
        assert (watch["user_agent"], watch["verb"], watch["resource"]) == (
            AGENT,
            "watch",
            "greetings",
        )
