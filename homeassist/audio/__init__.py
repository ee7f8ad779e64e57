"""Voice: capture, wake word, endpointing, speech to text, and the speaker."""
