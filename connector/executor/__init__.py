"""The executors' side of the source: read a task's offset ranges into Arrow record batches."""
