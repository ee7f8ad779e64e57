"""ESPHome voice satellites over the ESPHome native API (issue 28)."""
