"""JSON reader schemas and Spark types: a DDL string or a JSON Schema in, a Spark type out.

``valueSchema`` for ``json`` is what ``from_json`` takes (a Spark DDL string of fields) or a
JSON Schema. DDL cannot be parsed in a Python worker without a JVM, so it is only wrapped into
a column type here and Spark parses it when it parses the source's declared schema. A JSON
Schema is mapped here, the way a reader of ``from_json`` would write its DDL by hand: every
field nullable (``from_json`` makes every field nullable whatever ``required`` says), integers
as ``BIGINT`` and numbers as ``DOUBLE`` (JSON says nothing of their width). The sink goes the
other way: :func:`json_schema_of` derives a JSON Schema from a column's Spark type, to register.

Pure: no Kafka, no registry; the codec (:mod:`kafka_rescalable.formats.json_codec`) does the I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pyspark.sql.types as T

from kafka_rescalable.errors import InvalidOptionError, KafkaSourceError
from kafka_rescalable.formats.ddl import to_ddl
from kafka_rescalable.formats.options import schema_document

__all__ = [
    "check_ddl",
    "column_ddl",
    "is_json_schema",
    "json_schema_of",
    "spark_type_of",
    "to_ddl",  # re-exported: the codec writes a mapped type as DDL with it
]

_WHOLE_TYPE = re.compile(r"^\s*(struct|array|map)\s*<", re.IGNORECASE)
"""A DDL text that is one type (``ARRAY<STRUCT<...>>``), not a list of fields."""


def is_json_schema(text: str) -> bool:
    """Whether ``valueSchema``'s text is a JSON Schema (a JSON object) rather than DDL."""
    return text.lstrip().startswith("{")


def column_ddl(ddl: str) -> str:
    """Wrap a DDL list of fields (``'id BIGINT, name STRING'``) into the column's type.

    A DDL text that already is one type (``ARRAY<STRUCT<id: BIGINT>>``, ``MAP<STRING, INT>``)
    stays as it is, as ``from_json`` takes both forms.
    """
    text = ddl.strip()
    return text if _WHOLE_TYPE.match(text) else f"STRUCT<{text}>"


_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[\w$]+|\S)")
_SIMPLE = frozenset(
    "boolean tinyint byte smallint short int integer bigint long float real double string "
    "binary date timestamp timestamp_ltz timestamp_ntz void variant".split()
)
_SIZED = frozenset(("decimal", "dec", "numeric", "char", "character", "varchar", "time"))


def check_ddl(ddl: str, option: str) -> None:
    """Check that a DDL string has the shape Spark parses, naming the option where it does not.

    Spark parses it, later, when it parses the source's declared schema, and its syntax error
    quotes that whole schema; this finds the common mistakes first (a misspelt type, a missing
    type, an unclosed ``<``) and says which option holds them. It accepts what it cannot judge.

    Raises
    ------
    InvalidOptionError
        Naming ``option`` and the text around the mistake.
    """
    tokens = [match.group(1) for match in _TOKEN.finditer(ddl)]
    try:
        _DdlChecker(tokens).whole()
    except _DdlMistake as mistake:
        msg = (
            f"{mistake} in the DDL string {ddl!r}; write the fields as from_json takes them, "
            "e.g. 'id BIGINT, tags ARRAY<STRING>, at TIMESTAMP, amount DECIMAL(10, 2)'"
        )
        raise InvalidOptionError(option, msg) from None


class _DdlMistake(KafkaSourceError):
    """A DDL mistake, turned into an InvalidOptionError naming the option."""


class _DdlChecker:
    """A recursive descent over DDL tokens: fields, and ARRAY / MAP / STRUCT types."""

    def __init__(self, tokens: list[str]) -> None:
        self._tokens = tokens
        self._at = 0

    def _peek(self) -> str:
        return self._tokens[self._at] if self._at < len(self._tokens) else ""

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if expected is not None and token.lower() != expected:
            found = f"{token!r}" if token else "the end"
            raise _DdlMistake(f"expected {expected!r}, found {found}")
        self._at += 1
        return token

    def whole(self) -> None:
        if _WHOLE_TYPE.match(" ".join(self._tokens)):
            self._type()
        else:
            self._fields(end="")
        if self._peek():
            raise _DdlMistake(f"unexpected {self._peek()!r}")

    def _fields(self, end: str) -> None:
        while True:
            name = self._take()
            if not name or not (name[0] == "`" or re.fullmatch(r"[\w$]+", name)):
                raise _DdlMistake(f"expected a field name, found {name or 'the end'!r}")
            if self._peek() == ":":
                self._take()
            self._type()
            while self._peek().lower() in ("not", "comment"):
                if self._take().lower() == "not":
                    self._take("null")
                else:
                    self._take()
            if self._peek() != ",":
                break
            self._take()
            if self._peek() == end:
                break

    def _type(self) -> None:
        name = self._take().lower()
        if name in ("array", "map", "struct"):
            self._take("<")
            if name == "struct":
                if self._peek() != ">":
                    self._fields(end=">")
            else:
                self._type()
                if name == "map":
                    self._take(",")
                    self._type()
            self._take(">")
        elif name in _SIZED:
            if self._peek() == "(":
                while self._take() != ")":
                    if not self._peek():
                        raise _DdlMistake("an unclosed '('")
        elif name == "interval":
            while self._peek() and self._peek() not in (",", ">"):
                self._take()
        elif name not in _SIMPLE:
            found = f"{name!r}" if name else "the end"
            raise _DdlMistake(f"expected a type, found {found}")
        if self._peek().lower() == "collate":  # STRING COLLATE UTF8_LCASE
            self._take()
            self._take()


def spark_type_of(schema: str | Mapping[str, Any], option: str) -> T.DataType:
    """Map a JSON Schema (its text, or the parsed document) to the Spark type it reads into.

    Parameters
    ----------
    schema
        The JSON Schema.
    option
        The option that gave it (``valueSchema``, or ``valueSubject`` for a registry's), for
        messages.

    Raises
    ------
    InvalidOptionError
        Naming ``option`` and the JSON pointer of the part that has no Spark type.
    """
    if isinstance(schema, str):
        refusal = "it starts with '{' but is not valid JSON"
        document = schema_document(schema, option, refusal, "give a JSON Schema")
    else:
        document = schema
    if not isinstance(document, Mapping):
        raise InvalidOptionError(option, "a JSON Schema must be a JSON object")
    return _Mapper(document, option).map(document, "#", ())


class _Mapper:
    """One walk over a JSON Schema document, resolving its local ``$ref``s."""

    def __init__(self, root: Mapping[str, Any], option: str) -> None:
        self._root = root
        self._option = option

    def fail(self, pointer: str, what: str) -> InvalidOptionError:
        msg = (
            f"the JSON Schema at {pointer} {what}; map it to a type Spark has, or give the "
            "column's type as a DDL string instead (e.g. 'id BIGINT, tags ARRAY<STRING>')"
        )
        return InvalidOptionError(self._option, msg)

    def map(self, node: Any, pointer: str, refs: tuple[str, ...]) -> T.DataType:
        if node is True or node == {}:
            return T.StringType()  # anything: kept as its JSON text, as from_json does
        if not isinstance(node, Mapping):
            raise self.fail(pointer, "is not a schema object")
        if "$ref" in node:
            return self._reference(node["$ref"], pointer, refs)
        for keyword in ("oneOf", "anyOf"):
            if keyword in node:
                return self._choice(node[keyword], f"{pointer}/{keyword}", refs)
        kind = self._kind(node, pointer)
        if kind == "object":
            return self._object(node, pointer, refs)
        if kind == "array":
            items = node.get("items", True)
            return T.ArrayType(self.map(items, f"{pointer}/items", refs), True)
        if kind == "string":
            return _string_type(node)
        if kind in _SCALARS:
            return _SCALARS[kind]
        raise self.fail(pointer, f"has type {kind!r}, which has no Spark type")

    def _kind(self, node: Mapping[str, Any], pointer: str) -> str:
        kind = node.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if len(kinds) != 1:
                raise self.fail(pointer, f"allows the types {kind}: a Spark column has one type")
            kind = kinds[0]
        if kind is None:
            if "properties" in node or "additionalProperties" in node:
                return "object"
            if "items" in node:
                return "array"
            if "enum" in node and all(isinstance(v, str) for v in node["enum"]):
                return "string"
            raise self.fail(pointer, "has no 'type'")
        return str(kind)

    def _object(self, node: Mapping[str, Any], pointer: str, refs: tuple[str, ...]) -> T.DataType:
        properties = node.get("properties")
        if properties:
            return T.StructType(
                [
                    T.StructField(name, self.map(sub, f"{pointer}/properties/{name}", refs), True)
                    for name, sub in properties.items()
                ]
            )
        extra = node.get("additionalProperties", True)
        if extra is False:
            raise self.fail(pointer, "is an object with no properties at all")
        values = self.map(extra, f"{pointer}/additionalProperties", refs)
        return T.MapType(T.StringType(), values, True)

    def _choice(self, options: Any, pointer: str, refs: tuple[str, ...]) -> T.DataType:
        if not isinstance(options, list):
            raise self.fail(pointer, "is not a list of schemas")
        kept = [
            (index, option)
            for index, option in enumerate(options)
            if not (isinstance(option, Mapping) and option.get("type") == "null")
        ]
        if len(kept) != 1:
            raise self.fail(pointer, "chooses between several non-null schemas")
        index, option = kept[0]
        return self.map(option, f"{pointer}/{index}", refs)

    def _reference(self, ref: Any, pointer: str, refs: tuple[str, ...]) -> T.DataType:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise self.fail(pointer, f"refers to {ref!r}: only local '#/...' references map")
        if ref in refs:
            raise self.fail(pointer, f"refers to {ref} recursively, which no Spark type holds")
        node: Any = self._root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                raise self.fail(pointer, f"refers to {ref}, which the schema does not have")
            node = node[part]
        return self.map(node, ref, (*refs, ref))


_SCALARS: dict[str, T.DataType] = {
    "integer": T.LongType(),
    "number": T.DoubleType(),
    "boolean": T.BooleanType(),
}

_STRING_FORMATS: dict[str, T.DataType] = {
    "date-time": T.TimestampType(),
    "date": T.DateType(),
}


def _string_type(node: Mapping[str, Any]) -> T.DataType:
    if node.get("contentEncoding") == "base64":
        return T.BinaryType()
    return _STRING_FORMATS.get(node.get("format", ""), T.StringType())


def json_schema_of(spark_type: T.DataType) -> dict[str, Any]:
    """Derive the JSON Schema of what the sink writes for a column of ``spark_type``.

    It maps back to ``spark_type`` with :func:`spark_type_of` where JSON can say it (every
    integer type comes back as ``BIGINT``, every fractional one as ``DOUBLE``). Nullable
    fields and elements allow ``null``; non-nullable fields are ``required``.

    Raises
    ------
    ValueError
        For a type the sink cannot write as JSON (intervals, variants, ...).
    """
    if isinstance(spark_type, T.StructType):
        properties = {
            field.name: _nullable(json_schema_of(field.dataType), field.nullable)
            for field in spark_type.fields
        }
        required = [field.name for field in spark_type.fields if not field.nullable]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return schema
    if isinstance(spark_type, T.ArrayType):
        items = _nullable(json_schema_of(spark_type.elementType), spark_type.containsNull)
        return {"type": "array", "items": items}
    if isinstance(spark_type, T.MapType):
        if not isinstance(spark_type.keyType, T.StringType):
            msg = f"a JSON object's keys are strings; {spark_type.simpleString()} has others"
            raise ValueError(msg)
        values = _nullable(json_schema_of(spark_type.valueType), spark_type.valueContainsNull)
        return {"type": "object", "additionalProperties": values}
    for types, schema in _DERIVED:
        if isinstance(spark_type, types):
            return dict(schema)
    msg = f"{spark_type.simpleString()} has no JSON form the sink writes"
    raise ValueError(msg)


_DERIVED: tuple[tuple[type | tuple[type, ...], dict[str, Any]], ...] = (
    ((T.ByteType, T.ShortType, T.IntegerType, T.LongType), {"type": "integer"}),
    ((T.FloatType, T.DoubleType, T.DecimalType), {"type": "number"}),
    (T.BooleanType, {"type": "boolean"}),
    (T.StringType, {"type": "string"}),
    (T.BinaryType, {"type": "string", "contentEncoding": "base64"}),
    (T.DateType, {"type": "string", "format": "date"}),
    (T.TimestampType, {"type": "string", "format": "date-time"}),
    (T.TimestampNTZType, {"type": "string"}),
)


def _nullable(schema: dict[str, Any], nullable: bool) -> dict[str, Any]:
    if not nullable:
        return schema
    return {"oneOf": [{"type": "null"}, schema]}
