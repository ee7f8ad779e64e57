"""Language-model clients behind one interface (``base.ModelClient``)."""

from homeassist.llm.base import ModelAnswer, ModelClient, SentenceSink

__all__ = ["ModelAnswer", "ModelClient", "SentenceSink"]
