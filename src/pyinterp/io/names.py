"""Sample and variant names, as every reader of pyinterp.io checks and selects them."""

from __future__ import annotations

import numpy as np


def first_repeat(keys):
    """(i, j) of the first key that repeats an earlier one (keys[j] == keys[i], i < j, j
    smallest), or None when all differ. Readers name both rows in their own words."""
    seen = {}
    for j, key in enumerate(keys):
        if key in seen:
            return seen[key], j
        seen[key] = j
    return None


def sample_keys(fid, iid):
    """Samples' matching keys: "FID IID", or IID alone when fid is None."""
    return list(iid) if fid is None else [f"{a} {b}" for a, b in zip(fid, iid)]


def select_samples(names, samples, path, *, listed="sample IDs", one="sample ID"):
    """Indices (in file order) of the samples a reader's ``samples=`` asks for, refusing a bare
    string, names the file lacks (naming them) and an empty list; `listed` and `one` say what the
    reader calls a sample ID."""
    if isinstance(samples, str):
        raise ValueError(f"samples must be a list of {listed}, got the string {samples!r}")
    wanted = [str(s) for s in samples]
    known = set(names)
    unknown = [s for s in dict.fromkeys(wanted) if s not in known]
    if unknown:
        shown = ", ".join(map(repr, unknown[:_NAMED])) + (", ..." if len(unknown) > _NAMED else "")
        raise ValueError(f"{path}: {len(unknown)} of the samples asked for are not in the file: {shown} (it has "
                         f"{len(names)} samples: {', '.join(map(repr, list(names)[:_NAMED]))}"
                         f"{', ...' if len(names) > _NAMED else ''})")
    if not wanted:
        raise ValueError(f"{path}: samples is empty; give at least one {one} (or None for all)")
    keep = set(wanted)
    return np.array([k for k, s in enumerate(names) if s in keep], dtype=np.int64)


_NAMED = 3  # names quoted in a message before "..."
