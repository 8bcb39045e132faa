"""stitchlab.topology"""
