"""Integration tests: everything here runs against a real Kafka broker and real Spark."""
