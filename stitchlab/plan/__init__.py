"""Fusion planning: groups, the device profile, the two-level cost model and the beam search."""

from .cost import Launch, Schedule, choose_schedule, delta_cost
from .device import PRESETS, DeviceProfile, current_profile, preset
from .groups import GraphView, GroupInfo, analyze
from .plan import CandidatePlan, KernelPlan, Plan, PlanEdge, PlanNode
from .search import Candidate, search

__all__ = [
    "Launch", "Schedule", "choose_schedule", "delta_cost", "PRESETS", "DeviceProfile",
    "current_profile", "preset", "GraphView", "GroupInfo", "analyze", "CandidatePlan",
    "KernelPlan", "Plan", "PlanEdge", "PlanNode", "Candidate", "search",
]
