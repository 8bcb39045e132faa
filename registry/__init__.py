"""stitchlab.registry"""
