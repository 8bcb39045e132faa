"""Device profiles: the numbers the cost model plans with.

A profile is read from the current GPU (through CuPy) or taken from a named preset, so planning and
code generation also run on a machine with no GPU (``sl.explain`` uses the H200 preset there).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceProfile:
    """What the planner knows about a GPU.

    Attributes:
        name: the device's name (or the preset's).
        arch: NVRTC target, e.g. ``"sm_90"``.
        sms: streaming multiprocessors.
        bandwidth: device-memory bandwidth in bytes/s (read + write counted, as a copy measures it).
        launch_overhead: seconds one kernel launch costs beyond its work.
        smem_per_sm: shared memory per SM in bytes.
        smem_per_block: shared memory one block may use without an opt-in, in bytes.
        regs_per_sm: 32-bit registers per SM.
        max_threads_per_sm: resident threads per SM.
        max_threads_per_block: threads one block may have.
        max_blocks_per_sm: resident blocks per SM.
        l2_bytes: L2 cache size.
    """

    name: str
    arch: str
    sms: int
    bandwidth: float
    launch_overhead: float = 3.0e-6
    smem_per_sm: int = 228 * 1024
    smem_per_block: int = 48 * 1024
    regs_per_sm: int = 65536
    max_threads_per_sm: int = 2048
    max_threads_per_block: int = 1024
    max_blocks_per_sm: int = 32
    l2_bytes: int = 50 * 1024 * 1024

    @property
    def warps_to_saturate(self) -> int:
        """Resident warps per SM from which a streaming kernel reaches full bandwidth (rule of thumb)."""
        return 24


#: Presets by name. H200: copy bandwidth as measured on the project's H200 (DESIGN.md §5).
PRESETS: dict[str, DeviceProfile] = {
    "H200": DeviceProfile(name="H200", arch="sm_90", sms=132, bandwidth=4.27e12, l2_bytes=60 * 1024 * 1024),
    "H100": DeviceProfile(name="H100", arch="sm_90", sms=132, bandwidth=3.0e12, l2_bytes=50 * 1024 * 1024),
}


def preset(name: str) -> DeviceProfile:
    """The preset called ``name`` (e.g. "H200")."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown device preset {name!r}; presets: {', '.join(PRESETS)}") from None


_current: DeviceProfile | None = None


def from_gpu() -> DeviceProfile:
    """The profile of CuPy's current device (bandwidth from memory clock and bus width, or the
    preset's measured number when the device's name matches a preset)."""
    import cupy

    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    for key, p in PRESETS.items():
        if key in name:
            bandwidth = p.bandwidth
            break
    else:
        # DDR: two transfers per clock; ~85 % of the theoretical peak is what copies reach
        bandwidth = 2.0 * props["memoryClockRate"] * 1e3 * props["memoryBusWidth"] / 8 * 0.85
    return DeviceProfile(
        name=name,
        arch=f"sm_{props['major']}{props['minor']}",
        sms=int(props["multiProcessorCount"]),
        bandwidth=float(bandwidth),
        smem_per_sm=int(props.get("sharedMemPerMultiprocessor", 228 * 1024)),
        smem_per_block=int(props.get("sharedMemPerBlock", 48 * 1024)),
        regs_per_sm=int(props.get("regsPerMultiprocessor", 65536)),
        max_threads_per_sm=int(props.get("maxThreadsPerMultiProcessor", 2048)),
        max_threads_per_block=int(props.get("maxThreadsPerBlock", 1024)),
        max_blocks_per_sm=int(props.get("maxBlocksPerMultiProcessor", 32)),
        l2_bytes=int(props.get("l2CacheSize", 50 * 1024 * 1024)),
    )


def current_profile(gpu: bool) -> DeviceProfile:
    """The current GPU's profile when ``gpu`` (cached), else the H200 preset."""
    global _current
    if not gpu:
        return PRESETS["H200"]
    if _current is None:
        _current = from_gpu()
    return _current
