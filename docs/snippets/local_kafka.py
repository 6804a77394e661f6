"""Testing your pipeline: the embedded Kafka broker shipped in the wheel.

Run by integration_tests/test_local_kafka.py (it starts a broker of its own, as a user's test
would). Needs Java 17; the first start downloads Kafka's jars from Maven Central.
"""

# --8<-- [start:broker]
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_rescalable.testing.local_kafka import LocalKafka

with LocalKafka() as kafka:  # a single KRaft node on 127.0.0.1, stopped at the block's end
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    admin.create_topics([NewTopic("shop-events", 2)])["shop-events"].result()
    topics = set(admin.list_topics(timeout=30).topics)
    print(kafka.bootstrap_servers, topics)
# --8<-- [end:broker]
