"""Allele counts packed two bits a call, as a .bed holds them: the form every genotype reader of
pyinterp.io hands the forests (a quarter of int8's memory, read in place by the core)."""

from __future__ import annotations

import numpy as np

MISSING_CALL = 0b01
# The .bed call of each byte value read as a count: 0, 1, 2 -> 0b11, 0b10, 0b00 (allele-1 counts),
# any other a missing call. A table look-up by byte is three times faster than arithmetic on counts.
_CALL_OF_BYTE = np.full(256, MISSING_CALL, dtype=np.uint8)
_CALL_OF_BYTE[:3] = [0b11, 0b10, 0b00]


def pack_counts(counts, out=None):
    """Pack allele counts, one row per variant, into .bed bytes.

    Parameters
    ----------
    counts : array of int, shape (n_variants, n_samples)
        Counts of allele 1 (0, 1 or 2); any other value (negative codes such as -9 or -127, 3) is
        a missing call.
    out : ndarray of uint8, shape (n_variants, (n_samples + 3) // 4), optional
        Where to write the bytes (a slice of a larger array, filled a block of variants at a time).

    Returns
    -------
    ndarray of uint8, shape (n_variants, (n_samples + 3) // 4)

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io.packing import pack_counts
    >>> from pyinterp.io import PackedGenotypes
    >>> counts = np.array([[0, 1, 2, -9, 2]], dtype=np.int8)
    >>> calls = pack_counts(counts)
    >>> np.asarray(PackedGenotypes(calls, 5))[:, 0]
    array([ 0.,  1.,  2., nan,  2.], dtype=float32)
    """
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.dtype.kind not in "iub":
        raise ValueError(f"counts must be a 2-d integer array (variants x samples), got {counts.dtype} "
                         f"of shape {counts.shape}")
    p, n = counts.shape
    width = (n + 3) // 4
    if out is None:
        out = np.empty((p, width), dtype=np.uint8)
    elif out.shape != (p, width) or out.dtype != np.uint8:
        raise ValueError(f"out must be a uint8 array of shape {(p, width)}")
    if counts.dtype.itemsize != 1:  # -1 and 3 stand for every value outside 0-2
        counts = np.clip(counts, -1, 3).astype(np.int8)
    calls = _CALL_OF_BYTE[counts.view(np.uint8)]
    if n % 4:
        calls = np.pad(calls, ((0, 0), (0, 4 - n % 4)), constant_values=0)
    quads = calls.reshape(p, width, 4)
    np.bitwise_or(quads[..., 0] | quads[..., 1] << 2, quads[..., 2] << 4 | quads[..., 3] << 6, out=out)
    return out
