"""Z-Wave through Z-Wave JS: the connection, the home model, device operations, the simulated home.

This layer knows no LangChain; the device tools in ``homeassist.tools.devices`` wrap it.
"""
