"""An emulated ESPHome voice device (``emulator.VoiceDevice``) on the native API: the Voice PE's own
messages, framed as the device frames them."""
