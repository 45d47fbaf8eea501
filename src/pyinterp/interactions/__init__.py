"""Interaction discovery from a forest's decision paths (paper 001, thesis ch. 9-10).

Signed features are (feature k, sign): sign -1 for the left branch (x <= threshold), +1 for the
right. Internally a signed feature is the integer code 2k (left) or 2k + 1 (right)."""

from .paths import SignedPaths, decode, encode, signed_paths

__all__ = ["SignedPaths", "decode", "encode", "signed_paths"]
