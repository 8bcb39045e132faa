"""stitchlab.compression"""
