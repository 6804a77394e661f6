"""Running queries: a query that never ends, fed by a steady producer, watched for a while.

All start their query with :func:`.steady.steady_query` and watch it with
:func:`.steady.watch`: end-to-end latency (:mod:`.latency`), the highest rate kept up
(:mod:`.sustained`), the memory benchmark's query process (:mod:`.memory_query`) and Spark's
own cost per micro-batch (:mod:`.task_floor`).
"""
