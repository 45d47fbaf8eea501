"""InteractionTable: the records returned by interaction finders, one per signed feature set."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np


def _sign_char(sign) -> str:
    return "+" if sign > 0 else "-" if sign < 0 else ""  # sign 0: an unsigned feature


class InteractionTable(Sequence):
    """Rows of signed interactions with numeric score columns.

    What the interaction finders return (:class:`~pyinterp.interactions.LSSFind`,
    :class:`~pyinterp.interactions.IterativeRandomForest`, :func:`~pyinterp.interactions.prevalent_sets`,
    ...): one row per signed feature set, a read-only sequence of records.

    ``table[i]`` is a record (a named tuple) with ``features`` - a tuple of (feature index, sign)
    sorted by index, sign -1 for ``x <= threshold`` and +1 for ``x > threshold`` (0 for an
    unsigned feature) - ``names`` (the same with column names when the data had them) and one
    field per score column, as Python scalars; ``table["dwp"]`` is a whole column as a numpy array
    (a copy), ``table["features"]`` the list of sets; ``table[i:j]`` is a table of those rows.
    ``len(table)`` counts the rows, iterating yields the records, and ``repr(table)`` shows the
    first 10 rows. Tables pickle. ``to_frame()`` needs pandas.

    Parameters
    ----------
    features : sequence of sequences of (int, int)
        One signed set per row: pairs (feature index, sign), as the finders give them sorted by
        index. Each is stored as a tuple of tuples.
    columns : dict of str to array-like of shape (n_interactions,)
        The score columns, in order: their names become the records' fields after ``features``
        and ``names``, so they must be valid Python identifiers, not starting with an underscore,
        other than those two.
    feature_names : sequence of str, default=None
        The names of the features (or feature groups) the indices point into; None: ``'x<k>'``.

    Raises
    ------
    ValueError
        If a column does not hold one value per interaction, or a column's name cannot be a field
        of the records.

    See Also
    --------
    LSSFind : Fills ``interactions_`` and ``minimal_`` with tables.
    IterativeRandomForest : Its ``interactions_`` is a table.

    Examples
    --------
    >>> from pyinterp.interactions import InteractionTable
    >>> table = InteractionTable([((0, -1), (1, -1)), ((2, 1),)], {"dwp": [0.25, 0.4]},
    ...                          feature_names=["age", "bmi", "sex"])
    >>> table
    InteractionTable with 2 interactions
    age- & bmi-  dwp=0.25
    sex+  dwp=0.4
    >>> table[0]
    Interaction(features=((0, -1), (1, -1)), names=(('age', -1), ('bmi', -1)), dwp=0.25)
    >>> len(table), table["dwp"].tolist(), table[0].dwp
    (2, [0.25, 0.4], 0.25)
    >>> [record.features for record in table if record.dwp > 0.3]
    [((2, 1),)]
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
        """The names of the score columns, in order (a new list).

        Examples
        --------
        >>> from pyinterp.interactions import InteractionTable
        >>> InteractionTable([((0, 1),)], {"dwp": [0.5], "rho": [-1.0]}).columns
        ['dwp', 'rho']
        """
        return list(self._columns)

    @property
    def features(self) -> list:
        """The signed sets, one per row: a new list of tuples of (feature index, sign).

        Examples
        --------
        >>> from pyinterp.interactions import InteractionTable
        >>> InteractionTable([((0, -1), (3, 1)), ((2, 1),)], {"dwp": [0.25, 0.4]}).features
        [((0, -1), (3, 1)), ((2, 1),)]
        """
        return list(self._features)

    def named(self, features) -> tuple:
        """((name, sign), ...) for a signed set, names falling back to 'x<k>'.

        Parameters
        ----------
        features : sequence of (int, int)
            A signed set: pairs (feature index, sign), e.g. a row of :attr:`features`.

        Returns
        -------
        tuple of (str, int)
            The pairs with each index replaced by the table's name for it (``feature_names``),
            or by ``'x<k>'`` when the table has no names.

        Examples
        --------
        >>> from pyinterp.interactions import InteractionTable
        >>> table = InteractionTable([((0, -1), (1, 1))], {"dwp": [0.25]}, feature_names=["age", "bmi"])
        >>> table.named(table.features[0])
        (('age', -1), ('bmi', 1))
        >>> InteractionTable([], {}).named([(3, 1)])
        (('x3', 1),)
        """
        return tuple((self._names[k] if self._names else f"x{k}", s) for k, s in features)

    def label(self, features) -> str:
        """A readable form such as 'x0- & x3+'.

        Parameters
        ----------
        features : sequence of (int, int)
            A signed set: pairs (feature index, sign), e.g. a row of :attr:`features`.

        Returns
        -------
        str
            The named features (see :meth:`named`) joined by ``" & "``, each followed by ``-``
            (sign -1, ``x <= threshold``), ``+`` (sign +1) or nothing (sign 0, an unsigned
            feature).

        Examples
        --------
        >>> from pyinterp.interactions import InteractionTable
        >>> table = InteractionTable([((0, -1), (3, 1))], {"dwp": [0.25]})
        >>> table.label(table.features[0])
        'x0- & x3+'
        >>> table.label([(2, 0)])
        'x2'
        """
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
        integer indices (negative ones count from the end), in order.

        Parameters
        ----------
        mask : array-like of bool of shape (n_interactions,), or array-like of int
            Booleans, one per row, or integer indices in ``[-n_interactions, n_interactions)``
            (repeats allowed); an empty sequence selects no row.

        Returns
        -------
        InteractionTable
            A new table of the selected rows, with the same columns and feature names.

        Raises
        ------
        ValueError
            If ``mask`` is not 1-d, or holds booleans of the wrong count.
        TypeError
            If ``mask`` holds values that are neither booleans nor integers.
        IndexError
            If an index is out of range.

        Examples
        --------
        >>> from pyinterp.interactions import InteractionTable
        >>> table = InteractionTable([((0, -1),), ((1, 1),), ((0, -1), (1, 1))], {"dwp": [0.5, 0.4, 0.2]})
        >>> table.select(table["dwp"] > 0.3).features
        [((0, -1),), ((1, 1),)]
        >>> table.select([-1, 0]).features
        [((0, -1), (1, 1)), ((0, -1),)]
        """
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
        same with the column or group names, 'x<k>' without), then the score columns.

        Returns
        -------
        pandas.DataFrame
            One row per interaction, in the table's order (index 0..n-1): ``interaction`` (its
            :meth:`label`), ``order`` (the set's size), ``features``, ``names`` (see :meth:`named`),
            then one column per score column.

        Raises
        ------
        ImportError
            If pandas is not installed.

        Examples
        --------
        >>> from pyinterp.interactions import InteractionTable
        >>> table = InteractionTable([((0, -1), (1, -1)), ((2, 1),)], {"dwp": [0.25, 0.4]},
        ...                          feature_names=["age", "bmi", "sex"])
        >>> frame = table.to_frame()
        >>> frame.columns.tolist()
        ['interaction', 'order', 'features', 'names', 'dwp']
        >>> frame["interaction"].tolist(), frame["order"].tolist()
        (['age- & bmi-', 'sex+'], [2, 1])
        """
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
