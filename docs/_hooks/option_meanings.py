"""What each option means, for the generated option reference (``options_table.py``).

The option's name, kind of value, default and the read modes and sides that take it come from
:data:`kafka_rescalable.config.table.TABLE` when the site is built; only the sentence saying
what the option does lives here, per side, since a typed-record option means one thing to the
source (how to read) and another to the sink (how to write). The build fails (a warning under
``mkdocs build --strict``) when an option of the table has no sentence here, or a sentence
names an option the table does not have, so the page cannot fall behind the code.
"""

from __future__ import annotations

from typing import Final

OURS: Final[frozenset[str]] = frozenset(
    {
        "startingOffsetsFromGroup",
        "minRecordsPerPartition",
        "fetchOffset.retryTimeout",
        "missingTopicTimeout",
        "parallelism",
        "parallelismUiUrl",
        "commitOffsetsToGroup",
        "maxEventTimeDrift",
        "idleTimeout",
        *(
            f"{column}{what}"
            for column in ("key", "value")
            for what in ("Format", "Schema", "Message", "Subject", "Framing")
        ),
        "mode",
        "deliveryGuarantee",
        "transactionalIdPrefix",
        "kafkaTokenProvider",
        "maxBytesPerTrigger",
        "deadLetterTopic",
        "deadLetterTransactionalIdPrefix",
    }
)
"""Options of this project, which Spark's built-in Kafka source and sink do not have (✱)."""

SOURCE: Final[dict[str, str]] = {
    "subscribe": (
        "Topics to read. An internal topic such as `__consumer_offsets` is read when named. "
        "Exactly one of `subscribe`, `subscribePattern`, `assign`."
    ),
    "subscribePattern": (
        "Read every topic whose whole name matches this regular expression (internal topics "
        "excluded); topics created later join at their earliest offset."
    ),
    "assign": 'Read these partitions only: `{"topicA":[0,1],"topicB":[2,4]}`.',
    "startingOffsetsByTimestampStrategy": (
        "What a partition with no record that recent does: `error` fails, `latest` starts it "
        "at its end."
    ),
    "endingTimestamp": "Batch only: end every partition at its first record at or after this time.",
    "endingOffsetsByTimestamp": (
        'Batch only: per partition, `{"topicA":{"0":1700000000000}}`; a partition with no '
        "such record ends at its latest offset."
    ),
    "startingTimestamp": (
        "Start every partition at its first record at or after this time (ms since the epoch)."
    ),
    "startingOffsetsByTimestamp": (
        'Per partition, `{"topicA":{"0":1700000000000}}`: start at the first record at or '
        "after that time."
    ),
    "startingOffsets": (
        '`earliest`, `latest` or JSON `{"topicA":{"0":23,"1":-1}}` (-2 earliest, -1 latest). '
        "JSON must list every partition (with `startingOffsetsFromGroup`, those the group has "
        "no offset for). A stream uses it only when it starts without a checkpoint."
    ),
    "startingOffsetsFromGroup": (
        "Start each partition at the offset this consumer group committed; partitions without "
        "one start where `startingOffsets` (or the timestamp options) say. Read once, when a "
        "stream starts without a checkpoint (a batch read starts there too). The group is "
        "never joined nor committed to. See [Moving from the built-in source]"
        "(../how-to/moving.md)."
    ),
    "endingOffsets": "Batch only: `latest` or JSON (-1 latest).",
    "failOnDataLoss": (
        "Fail when records are gone (retention, deleted topic or partition, topic re-created); "
        "`false` logs a warning and goes on (a re-created topic is then read from its earliest "
        "offset)."
    ),
    "includeHeaders": "Add the `headers` column.",
    "parallelism": (
        "Number of reader slots, or `auto` to follow the application's cores. Unset: one slot "
        "per partition. May change between runs of one checkpoint: see "
        "[Rescaling](../how-to/rescaling.md)."
    ),
    "parallelismUiUrl": (
        "With `parallelism=auto`: the driver's UI address, when the source cannot find it "
        "(not Linux, or behind a proxy)."
    ),
    "minPartitions": "At least this many Spark tasks per batch; long offset ranges are cut.",
    "maxRecordsPerPartition": "No Spark task reads more records than this; long ranges are cut.",
    "minRecordsPerPartition": (
        "A small batch gets one Spark task per this many records (at least one, and at least "
        "`minPartitions`), each reading whole reader slots, since every Python task costs Spark "
        "a fixed start-up; the slots and the checkpoint do not change. `1` gives every slot "
        "with data its own task. Ignored with `maxRecordsPerPartition`."
    ),
    "maxOffsetsPerTrigger": (
        "Stream: at most this many records per micro-batch, shared among partitions in "
        "proportion to their backlog, every partition with data getting at least one."
    ),
    "maxBytesPerTrigger": (
        "Stream: at most this many bytes of keys and values per micro-batch (`1048576`, `64m`, "
        "`1g`), shared among partitions as `maxOffsetsPerTrigger` shares records; a partition's "
        "first record is read even when larger. The driver reads the sizes: see "
        "[Capping a batch in bytes](../how-to/operating.md#capping-a-batch-in-bytes)."
    ),
    "minOffsetsPerTrigger": "Stream: skip a trigger until this many records wait...",
    "maxTriggerDelay": "...but never longer than this since the last batch.",
    "commitOffsetsToGroup": (
        "Stream: after each batch, commit its end offsets to this consumer group, so lag tools "
        "show the query's lag. Never changes where the query resumes (the checkpoint does)."
    ),
    "maxEventTimeDrift": (
        "Stream: event-time alignment, e.g. `20 seconds`: no partition reads past the slowest "
        "active one's event time plus this. See [Event time](../how-to/event-time.md)."
    ),
    "idleTimeout": (
        "With alignment: a partition with no new records for this long stops holding the "
        "others back."
    ),
    "kafkaConsumer.pollTimeoutMs": "An executor fails a task when no record arrives for this long.",
    "fetchOffset.numRetries": "Driver retries of a lookup that failed with a non-transient error.",
    "fetchOffset.retryIntervalMs": "First wait between retries; it doubles up to 1 s.",
    "fetchOffset.retryTimeout": (
        "How long the driver retries transient Kafka errors (a leader election, a broker "
        "restarting, an unreachable cluster) before failing the query with the last Kafka "
        "error."
    ),
    "missingTopicTimeout": (
        "Stream: a topic named in `subscribe` or `assign` that does not exist is logged at "
        "once and fails the query after this long."
    ),
    "groupIdPrefix": (
        "Prefix of the generated consumer group id (no offsets are committed to it; "
        "`kafka.group.id` sets the id itself)."
    ),
    "kafkaTokenProvider": (
        "`module:function` giving SASL/OAUTHBEARER tokens (AWS MSK IAM, a token service), "
        "imported on the driver at `load()` and in every Python worker. See "
        "[Security](../how-to/security.md#sign-in-with-a-token-provider)."
    ),
    "keyFormat": (
        "Decode the key into a typed column. See [Typed records](../how-to/typed-records.md)."
    ),
    "keySchema": "The key's reader schema inline (as `valueSchema`).",
    "keyMessage": "`protobuf`: the key message's full name.",
    "keySubject": "The registry subject of the key's reader schema; default `<topic>-key`.",
    "keyFraming": "As `valueFraming`, for the key.",
    "valueFormat": (
        "Decode the value into a typed column. See [Typed records](../how-to/typed-records.md)."
    ),
    "valueSchema": (
        "The reader schema inline: an Avro schema (JSON text) for `avro`; a Spark DDL string "
        "or a JSON Schema for `json`; the path of a descriptor set file for `protobuf`. For "
        "`avro` and `json` with a registry, the subject's latest version when not given."
    ),
    "valueMessage": "`protobuf`: the message's full name, e.g. `shop.Order`.",
    "valueSubject": (
        "The registry subject whose latest version is the reader schema, fixed when the "
        "DataFrame is defined; default `<topic>-value`."
    ),
    "valueFraming": (
        "Whether payloads start with a schema registry's magic byte and 4-byte schema id: "
        "default `confluent` with `schema.registry.url`, else `none`."
    ),
    "mode": (
        "A record that does not decode: `FAILFAST` fails the task naming topic, partition, "
        "offset and schema id; `PERMISSIVE` makes the column null and gives the reason in a "
        "`decodeError` column; `DEADLETTER` (implied by `deadLetterTopic`) writes the record "
        "to `deadLetterTopic` instead of the output."
    ),
    "deadLetterTopic": (
        "Streaming only: records whose key or value does not decode are written there, raw, "
        "with their headers and the reason, exactly once, and left out of the output."
    ),
    "deadLetterTransactionalIdPrefix": (
        "Prefix of the dead-letter producers' transactional ids and of their marker group "
        "(`<prefix>-<query id>`), for ACLs."
    ),
}
"""What each source option does, by its name in the table."""

SINK: Final[dict[str, str]] = {
    "keyFormat": (
        "How the `key` column is written: `binary` takes string or binary; `string` a string "
        "(UTF-8); `json`, `avro`, `protobuf` encode it with the schema."
    ),
    "keySchema": "The key's writer schema inline (as `valueSchema`).",
    "keyMessage": "`protobuf`: the key message's full name.",
    "keySubject": (
        "The registry subject the key's schema is registered under; default `<topic>-key`."
    ),
    "keyFraming": "As `valueFraming`, for the key.",
    "valueFormat": (
        "How the `value` column is written: `binary` takes string or binary as Spark's sink "
        "does; `string` a string (UTF-8); `json`, `avro`, `protobuf` encode it with the schema."
    ),
    "valueSchema": (
        "The writer schema inline (Avro JSON, JSON Schema or DDL, a Protobuf descriptor set's "
        "path); for `avro` without it, the schema is derived from the column's Spark type as "
        "spark-avro's `to_avro` does."
    ),
    "valueMessage": "`protobuf`: the message's full name.",
    "valueSubject": (
        "The registry subject the writer schema is registered under, of the `topic` option's "
        "topic; default `<topic>-value`."
    ),
    "valueFraming": (
        "`confluent` writes the magic byte and the registered schema's id before each payload "
        "(needs `schema.registry.url`, and is then the default); `none` plain payloads."
    ),
    "topic": "Topic for every row; overrides a `topic` column, as in Spark.",
    "deliveryGuarantee": (
        "`at-least-once`, or `exactly-once` (one Kafka transaction per task). See "
        "[Exactly-once sink](../how-to/exactly-once.md)."
    ),
    "transactionalIdPrefix": (
        "Start of the transactional ids and marker groups, under `exactly-once`."
    ),
    "kafkaTokenProvider": (
        "`module:function` the producers get their SASL/OAUTHBEARER tokens from, as for the "
        "source. See [Security](../how-to/security.md#sign-in-with-a-token-provider)."
    ),
}
"""What each sink option does, by its name in the table."""
