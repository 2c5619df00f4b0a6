"""Client for regcoded (an emulator of Adobe Pass AccessEnabler and OAuth device-flow devices) and its lab helpers."""

from .client import Regcoded, RegcodedConnectionError, RegcodedError, Subscription
from .framing import SSEEvent, SSEParser
from .lab import Device, DeviceError, LabDaemon, Simulator

__all__ = [
    "Device",
    "DeviceError",
    "LabDaemon",
    "Regcoded",
    "RegcodedConnectionError",
    "RegcodedError",
    "SSEEvent",
    "SSEParser",
    "Simulator",
    "Subscription",
]
