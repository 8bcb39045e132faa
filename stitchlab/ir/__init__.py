"""The intermediate representation: nodes, the op table, canonical graphs."""

from .graph import Graph, build_graph
from .node import Node
from .ops import OPS, Kind, OpDef

__all__ = ["Graph", "Node", "OPS", "Kind", "OpDef", "build_graph"]
