"""Packaging for stitchlab.

The top-level folders ``registry/``, ``topology/`` and ``compression/`` are installed as
``stitchlab.registry``, ``stitchlab.topology`` and ``stitchlab.compression``: they are not
top-level import names (``compression`` is a standard-library package from Python 3.14 on).
"""

from setuptools import find_packages, setup

# folder on disk -> import name
_MAPPED = {
    "stitchlab": "stitchlab",
    "registry": "stitchlab.registry",
    "topology": "stitchlab.topology",
    "compression": "stitchlab.compression",
}


def _packages() -> list[str]:
    names = []
    for folder, name in _MAPPED.items():
        names.append(name)
        names += [f"{name}.{sub}" for sub in find_packages(folder)]
    return sorted(set(names))


# NVRTC 13.4 or later: older ptxas can drop a negation in fused integer min/max (13.0 also a float16
# abs's sign mask), and stitchlab then compiles such kernels unoptimized (runtime/nvrtc.py
# PTXAS_FIXED, runtime/kernels.py ptxas_options)
_NVRTC = ["cuda-bindings>=12.8", "nvidia-cuda-nvrtc>=13.4", "nvidia-cuda-runtime>=12.8"]
_NOTEBOOK = ["ipywidgets>=8.1", "ipykernel>=6.29", "nbclient>=0.10", "nbformat>=5.10", "tqdm>=4.66"]
_DISTRIBUTED = ["torch>=2.4", "scipy>=1.11", "nvidia-ml-py>=12.0"]
_TEST = [
    "pytest>=8",
    "pytest-xdist>=3.5",
    "pytest-timeout>=2.3",
    "hypothesis>=6.100",
    *_NVRTC,
]
_DOCS = ["mkdocs>=1.6", "mkdocstrings[python]>=0.26", "mkdocs-jupyter>=0.25"]

setup(
    name="stitchlab",
    version="0.1.0",
    description="Lazy NumPy/CuPy-style arrays stitched into fused CUDA kernels, with a persistent kernel registry",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=_packages(),
    package_dir={name: folder for folder, name in _MAPPED.items()},
    package_data={"stitchlab.topology": ["presets/*.json", "weights/*"]},
    install_requires=["numpy>=2.0", "diskcache>=5.6", "ml_dtypes>=0.5"],
    extras_require={
        "cuda13": ["cupy-cuda13x>=13.4"],
        "cuda12": ["cupy-cuda12x>=13.4"],
        "nvrtc": _NVRTC,
        "notebook": _NOTEBOOK,
        "distributed": _DISTRIBUTED,
        "test": _TEST + _NOTEBOOK + _DISTRIBUTED,
        "docs": _DOCS,
        "dev": _TEST + _NOTEBOOK + _DISTRIBUTED + _DOCS + ["cupy-cuda13x>=13.4", "ruff>=0.6"],
    },
    entry_points={"console_scripts": ["stitchlab = stitchlab.cli:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Framework :: Jupyter",
        "Environment :: GPU :: NVIDIA CUDA",
    ],
)
