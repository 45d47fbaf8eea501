"""InteractionTable: the records returned by interaction finders, one per signed feature set."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np


def _sign_char(sign) -> str:
    return "+" if sign > 0 else "-" if sign < 0 else ""  # sign 0: an unsigned feature


class InteractionTable(Sequence):
    """Rows of signed interactions with numeric score columns.

    ``table[i]`` is a record (a named tuple) with ``features`` - a tuple of (feature index, sign)
    sorted by index, sign -1 for ``x <= threshold`` and +1 for ``x > threshold`` - ``names``
    (the same with column names when the data had them) and one field per score column;
    ``table["dwp"]`` is a whole column as a numpy array. ``to_frame()`` needs pandas.
    """

    def __init__(self, features, columns, feature_names=None):
        self._features = [tuple(f) for f in features]
        self._columns = {name: np.asarray(values) for name, values in columns.items()}
        for name, values in self._columns.items():
            if values.shape != (len(self._features),):
                raise ValueError(f"column {name!r} must have one value per interaction")
        self._names = None if feature_names is None else [str(n) for n in feature_names]
        self._record = namedtuple("Interaction", ["features", "names", *self._columns])

    def __getstate__(self):
        # The record class is made per table (its fields are the columns), so pickle cannot find it
        # by name: leave it out and rebuild it.
        state = self.__dict__.copy()
        del state["_record"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._record = namedtuple("Interaction", ["features", "names", *self._columns])

    @property
    def columns(self) -> list:
        return list(self._columns)

    @property
    def features(self) -> list:
        return list(self._features)

    def named(self, features) -> tuple:
        """((name, sign), ...) for a signed set, names falling back to 'x<k>'."""
        return tuple((self._names[k] if self._names else f"x{k}", s) for k, s in features)

    def label(self, features) -> str:
        """A readable form such as 'x0- & x3+'."""
        return " & ".join(f"{name}{_sign_char(s)}" for name, s in self.named(features))

    def __len__(self) -> int:
        return len(self._features)

    def __getitem__(self, key):
        if isinstance(key, str):
            if key == "features":
                return self.features
            return self._columns[key].copy()
        if isinstance(key, slice):
            return InteractionTable(self._features[key], {n: v[key] for n, v in self._columns.items()}, self._names)
        f = self._features[key]
        return self._record(f, self.named(f), *(v[key].item() for v in self._columns.values()))

    def select(self, mask) -> "InteractionTable":
        """The rows where ``mask`` is true (one boolean per interaction), or the rows at the given
        integer indices (negative ones count from the end), in order."""
        idx = self._rows(mask)
        return InteractionTable([self._features[i] for i in idx], {n: v[idx] for n, v in self._columns.items()},
                                self._names)

    def _rows(self, mask) -> np.ndarray:
        n = len(self._features)
        shape_error = ValueError(f"mask must be a 1-d sequence of booleans or integer indices, got {mask!r}")
        try:
            m = np.asarray(mask)
        except ValueError:  # ragged nesting
            raise shape_error from None
        if m.ndim != 1:
            raise shape_error
        if m.dtype == bool:
            if len(m) != n:
                raise ValueError(f"mask has {len(m)} booleans for a table of {n} interactions")
            return np.flatnonzero(m)
        if not len(m):
            return np.zeros(0, dtype=np.intp)
        if m.dtype.kind not in "iu":
            raise TypeError(f"mask must hold booleans or integer indices, got values of dtype {m.dtype}")
        if m.min() < -n or m.max() >= n:
            raise IndexError(f"mask holds indices outside [-{n}, {n}) for a table of {n} interactions")
        return m.astype(np.intp)

    def to_frame(self):
        """A pandas DataFrame: 'interaction' label, 'order', 'features' (indices), 'names' (the
        same with the column or group names, 'x<k>' without), then the score columns."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("InteractionTable.to_frame needs pandas: pip install pandas") from None

        return pd.DataFrame({"interaction": [self.label(f) for f in self._features],
                             "order": [len(f) for f in self._features],
                             "features": self._features, "names": [self.named(f) for f in self._features],
                             **self._columns})

    def __repr__(self) -> str:
        head = [f"{self.label(f)}  " + ", ".join(f"{n}={v[i]:.4g}" for n, v in self._columns.items())
                for i, f in enumerate(self._features[:10])]
        more = [f"... {len(self) - 10} more"] if len(self) > 10 else []
        return "\n".join([f"InteractionTable with {len(self)} interactions", *head, *more])
