"""stitchlab.topology: device topologies, model profiles, collective cost models and a simulator
of one data-parallel training iteration.

``import stitchlab.topology`` does not import torch; :meth:`ModelProfile.from_module`,
discovery and calibration import it when called.
"""

from . import collectives, presets
from .devices import DEVICE_KINDS, LINK_KINDS, SWITCH_KINDS, Device, DeviceTopology, Link, Switch
from .discovery import discover
from .errors import DocumentError, DoesNotFitError, ProfileError, TopologyError
from .profile import LayerProfile, ModelProfile, ParamInfo
from .simulator import HOROVOD_DEFAULTS, CommRecord, Event, HorovodCycle, SimResult, simulate
from .strategy import SCHEMES, Strategy

__all__ = [
    "DEVICE_KINDS", "LINK_KINDS", "SWITCH_KINDS", "SCHEMES", "HOROVOD_DEFAULTS",
    "Device", "DeviceTopology", "Link", "Switch", "Strategy",
    "LayerProfile", "ModelProfile", "ParamInfo", "CommRecord", "Event", "HorovodCycle", "SimResult",
    "simulate",
    "DocumentError", "DoesNotFitError", "ProfileError", "TopologyError",
    "collectives", "presets", "discover",
]
