"""Intent classification: request kind and the local command (pure, no I/O).

The entry point is ``homeassist.intent.classifier.IntentClassifier``; nothing is imported here, so
importing one module of the package loads only what that module needs.
"""
