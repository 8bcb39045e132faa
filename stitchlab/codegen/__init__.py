"""Code generation: schedules -> CUDA C source (one emitter per schedule family)."""

from .elemental import CodegenError
from .program import build_plan
from .schedules import CODEGEN_VERSION, KernelSource, emit

__all__ = ["CodegenError", "build_plan", "CODEGEN_VERSION", "KernelSource", "emit"]
