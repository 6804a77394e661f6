"""Schema references: the walk over the registry's answers, and Avro schemas made whole.

The registry's answers are plain values here (what ``SchemaRegistryClient.get_version`` gives,
as :class:`ReferencedSchema`); the real registry's are tested in
``integration_tests/test_schema_registry.py``. The self-contained Avro schema is checked
against fastavro's own way with references (``parse_schema`` with ``named_schemas``, as
confluent-kafka's serializers use it) and read by both decoders.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from kafka_rescalable import SchemaReferenceError, SchemaRegistryError
from kafka_rescalable.formats.avro.inlined import self_contained
from kafka_rescalable.formats.native_core import native_core
from kafka_rescalable.formats.references import ReferencedSchema, SchemaRef, follow_references

ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "shop.common",
    "fields": [
        {"name": "city", "type": "string"},
        {
            "name": "geo",
            "type": {
                "type": "record",
                "name": "Geo",
                "fields": [{"name": "lat", "type": "double"}],
            },
        },
    ],
}
CUSTOMER = {
    "type": "record",
    "name": "Customer",
    "namespace": "shop.crm",
    "fields": [
        {"name": "home", "type": "shop.common.Address"},
        {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["GOLD", "TIN"]}},
    ],
}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ship", "type": "shop.common.Address"},
        {"name": "bill", "type": ["null", "shop.common.Address"], "default": None},
        {"name": "buyer", "type": "shop.crm.Customer"},
        {"name": "pin", "type": "shop.common.Geo"},
        {"name": "tiers", "type": {"type": "array", "items": "shop.crm.Tier"}},
    ],
}
ORDER_VALUE = {
    "id": 7,
    "ship": {"city": "Lyon", "geo": {"lat": 45.7}},
    "bill": {"city": "Metz", "geo": {"lat": 49.1}},
    "buyer": {"home": {"city": "Nice", "geo": {"lat": 43.7}}, "tier": "GOLD"},
    "pin": {"lat": 1.5},
    "tiers": ["TIN", "GOLD"],
}


Registry = dict[tuple[str, int], ReferencedSchema]
"""What the registry holds, by subject and version."""


def _registry(*schemas: ReferencedSchema) -> Registry:
    return {(schema.subject, schema.version): schema for schema in schemas}


def _schema(subject: str, version: int, *references: SchemaRef) -> ReferencedSchema:
    return ReferencedSchema(subject, version, f"text of {subject}", "AVRO", references)


def _follow(registry: Registry, *refs: SchemaRef, own: SchemaRef | None = None) -> list[str]:
    asked: list[SchemaRef] = []

    def fetch(ref: SchemaRef) -> ReferencedSchema | None:
        asked.append(ref)
        return registry.get((ref.subject, ref.version))

    found = follow_references("subject 'orders-value'", refs, fetch, own)
    assert len(asked) == len(set(asked)), "each reference is asked once"
    return [f"{schema.subject}@{schema.version}" for schema in found]


def test_references_come_dependencies_first_each_once() -> None:
    geo, address = SchemaRef("geo", 1, "Geo"), SchemaRef("address", 2, "Address")
    customer = SchemaRef("customer", 1, "Customer")
    registry = _registry(
        _schema("geo", 1),
        _schema("address", 2, geo),
        _schema("customer", 1, address, geo),  # a diamond: address and geo twice
    )
    assert _follow(registry, customer, address) == ["geo@1", "address@2", "customer@1"]
    assert _follow(registry) == []


def test_a_missing_reference_names_the_subject_the_reference_and_the_way_to_it() -> None:
    address = SchemaRef("address", 2, "shop.Address")
    registry = _registry(_schema("address", 2, SchemaRef("geo", 3, "shop.Geo")))
    with pytest.raises(SchemaReferenceError) as refused:
        _follow(registry, address)
    message = str(refused.value)
    assert "subject 'orders-value' references subject 'geo' version 3 (for 'shop.Geo')" in message
    assert "the registry does not have" in message
    assert "subject 'address' version 2 -> subject 'geo' version 3" in message
    assert (refused.value.subject, refused.value.reference) == (
        "subject 'orders-value'",
        ("geo", 3),
    )
    assert isinstance(refused.value, SchemaRegistryError)  # what callers caught before


def test_a_cycle_is_refused_naming_it() -> None:
    a, b = SchemaRef("a", 1), SchemaRef("b", 1)
    registry = _registry(_schema("a", 1, b), _schema("b", 1, a))
    with pytest.raises(SchemaReferenceError, match="form a cycle") as refused:
        _follow(registry, a)
    assert "subject 'a' version 1 -> subject 'b' version 1 -> subject 'a' version 1" in str(
        refused.value
    )
    assert refused.value.reference == ("a", 1)
    # A reference back to the schema being read is a cycle too, one step sooner.
    back = _registry(_schema("b", 1, SchemaRef("orders-value", 4)))
    with pytest.raises(SchemaReferenceError, match="form a cycle"):
        _follow(back, b, own=SchemaRef("orders-value", 4))
    # The same subject at another version is no cycle.
    older = _registry(_schema("orders-value", 3))
    assert _follow(older, SchemaRef("orders-value", 3), own=SchemaRef("orders-value", 4)) == [
        "orders-value@3"
    ]


def _with_named_schemas(schema: Any, *referenced: Any) -> Any:
    """Parse as confluent-kafka's serializers do: referenced types first, by name."""
    named: dict[str, Any] = {}
    for other in referenced:
        fastavro.parse_schema(other, named_schemas=named)
    return fastavro.parse_schema(schema, named_schemas=named)


def _write(parsed: Any, value: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, value)
    return out.getvalue()


@pytest.mark.parametrize("order", [(ADDRESS, CUSTOMER), (CUSTOMER, ADDRESS)])
def test_a_self_contained_schema_reads_what_the_references_write(order: tuple[Any, ...]) -> None:
    text = self_contained(json.dumps(ORDER), [json.dumps(other) for other in order])
    document = json.loads(text)
    assert "shop.common.Address" not in json.dumps(document["fields"][1])  # defined there
    payload = _write(_with_named_schemas(ORDER, ADDRESS, CUSTOMER), ORDER_VALUE)

    parsed = fastavro.parse_schema(document)
    assert fastavro.schemaless_reader(io.BytesIO(payload), parsed) == ORDER_VALUE
    # Full names are kept: Avro's resolution matches records by name, writer to reader.
    assert parsed["fields"][1]["type"]["name"] == "shop.common.Address"
    assert parsed["fields"][3]["type"]["name"] == "shop.crm.Customer"

    core = native_core()
    assert core is not None, "the native core is built for the tests"
    decoded = core.AvroDecoder(text).decode_plain(pa.array([payload], pa.binary()))
    assert decoded.to_pylist()[0]["buyer"]["home"] == ORDER_VALUE["buyer"]["home"]
    assert decoded.to_pylist()[0]["tiers"] == ["TIN", "GOLD"]


def test_a_type_in_the_null_namespace_stays_there() -> None:
    money = {"type": "record", "name": "Money", "fields": [{"name": "units", "type": "long"}]}
    price = {
        "type": "record",
        "name": "Price",
        "namespace": "shop",
        "fields": [{"name": "net", "type": "Money"}],
    }
    text = self_contained(json.dumps(price), [json.dumps(money)])
    parsed = fastavro.parse_schema(json.loads(text))
    assert parsed["fields"][0]["type"]["name"] == "Money"  # not shop.Money
    # fastavro's named_schemas cannot say it (it looks for shop.Money); Java's parser can.
    payload = _write(parsed, {"net": {"units": 3}})
    assert fastavro.schemaless_reader(io.BytesIO(payload), parsed) == {"net": {"units": 3}}


def test_what_cannot_be_made_whole_is_left_for_the_parser_to_refuse() -> None:
    assert self_contained("not json", ['{"type": "string"}']) == "not json"
    unknown = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "X"}]})
    assert json.loads(self_contained(unknown, [json.dumps(ADDRESS)])) == json.loads(unknown)
    assert self_contained(unknown, []) == unknown
