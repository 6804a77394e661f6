"""What the user asks for: the source options parsed once, ``kafka.*`` for librdkafka."""
