"""The satellites' sections: homeassist as Wyoming services (``[wyoming]``), each satellite
(``[satellites.NAME]``, Wyoming or ESPHome) and what ESPHome devices need of the server
(``[esphome]``). Part of ``settings``; each field carries its description and allowed values, as there."""

from __future__ import annotations

from homeassist.config.section import EsphomeKeyStr, SatelliteUriStr, Section, TcpUriStr, setting


class WyomingSettings(Section):
    """``[wyoming]``: homeassist as Wyoming services (conversation, speech to text, text to speech) for
    Home Assistant and other Wyoming clients. No authentication: the address decides who may use it."""

    enabled: bool = setting(False, "serve homeassist as Wyoming services (handle, asr, tts) at uri")
    uri: TcpUriStr = setting(
        "tcp://127.0.0.1:10400",
        "where the Wyoming services listen; a home server whose Home Assistant runs on another machine "
        "sets its LAN address (no authentication: anyone who reaches it may use it)",
        allowed="a tcp://HOST:PORT URI such as 'tcp://127.0.0.1:10400' or 'tcp://192.168.1.5:10400'",
    )
    zeroconf: bool = setting(
        False, "announce the services on the LAN over mDNS, so Home Assistant finds them"
    )
    allow_actions: bool = setting(
        False, "let Wyoming conversation requests switch devices and set timers; off, they may only ask"
    )
    timeout_s: float = setting(
        60.0, "seconds one Wyoming request may take before its client gets an error", gt=0, le=600
    )


class SatelliteSettings(Section):
    """``[satellites.NAME]``: one satellite in a room: a Wyoming one (``wyoming-satellite``), or an
    ESPHome voice device (Home Assistant Voice PE, Linux Voice Assistant, any ``voice_assistant`` build)."""

    uri: SatelliteUriStr = setting(
        "",
        "where the satellite listens; homeassist connects to it",
        allowed="a Wyoming tcp://HOST:PORT URI such as 'tcp://kitchen-pi.local:10700', or an ESPHome "
        "esphome://HOST[:PORT] URI such as 'esphome://kitchen-voice.local:6053'",
    )
    room: str = setting(
        "",
        "the room it stands in; '' = the area the satellite reports (its --area, an ESPHome device's "
        "area), else none",
        allowed="one of the home's areas, such as 'Kitchen', or ''",
    )
    encryption_key: EsphomeKeyStr = setting(
        "",
        "an ESPHome device's API encryption key (its YAML's api: encryption: key:); '' for none",
        allowed="base64 of 32 bytes (44 characters ending in '='), as the device's YAML has it, or ''",
    )

    @property
    def esphome(self) -> bool:
        """Whether it is an ESPHome device (``esphome://``)."""
        return self.uri.startswith("esphome://")


class EsphomeSettings(Section):
    """``[esphome]``: what ESPHome voice satellites need of the server: the media listener they fetch
    their replies from (only one-time reply URLs are served there)."""

    media_host: str = setting(
        "",
        "the address the media listener binds; '' = every interface, each device told the address it "
        "is reached from",
        allowed="'' or an IP address of this server, such as '192.168.1.10'",
    )
    media_port: int = setting(0, "the media listener's port; 0 = any free port", ge=0, le=65535)
