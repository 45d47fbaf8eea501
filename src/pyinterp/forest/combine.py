"""combine: the trees of forests fitted on the same data as one forest (R randomForest's combine)."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .. import _core
from .estimators import _BaseForest


def combine(*forests):
    """One forest holding the trees of forests fitted apart on the same training rows.

    R randomForest's ``combine``: the trees of ``forests``, in the order given, fitted apart (in
    other processes, on other machines, at other times) on the same training rows.

    Checks what the forests record: all are fitted pyinterp forests of one class (regressor or
    classifier) with the same criterion, the same classes, the same number of training rows and of
    features, the same feature names and the same number of outputs; and refuses two forests
    fitted with the same seed, whose trees would be the same trees. It cannot check that the rows
    are the same rows in the same order: the in-bag counts it keeps (for ``oob_predict``, MDI-oob
    and the other out-of-bag measures) assume they are. Other parameters may differ, as in R; the
    result takes the first forest's, with ``n_estimators`` the total, and has no ``oob_score_``
    (the forests' scores do not combine; ``oob_predict(X)`` gives the combined forest's).

    Forests fitted with ``random_state=s`` and ``warm_start`` growth, or in chunks on a cluster,
    need no combine: trees continue the stream of ``s``, so the result equals one fit.

    Parameters
    ----------
    *forests : RandomForestRegressor or RandomForestClassifier
        One or more fitted pyinterp forests of one class, fitted on the same rows with
        different seeds. They are not changed.

    Returns
    -------
    forest : RandomForestRegressor or RandomForestClassifier
        A new fitted forest of the first forest's class and parameters (``n_estimators`` the
        total number of trees, ``oob_score`` False) whose trees are the forests' trees in order;
        it predicts their mean, each tree counting once.

    Raises
    ------
    TypeError
        If an argument is not a pyinterp forest, or the forests are of different classes.
    ValueError
        If no forest is given, or the forests differ in criterion, training shape, feature
        names, outputs or classes, or two of them were fitted with the same seed.

    See Also
    --------
    RandomForestRegressor : Its ``warm_start`` grows one forest in steps instead.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.forest import combine
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4))
    >>> y = X[:, 0] + rng.normal(scale=0.1, size=200)
    >>> a = RandomForestRegressor(20, random_state=1).fit(X, y)  # on one machine
    >>> b = RandomForestRegressor(30, random_state=2).fit(X, y)  # on another
    >>> forest = combine(a, b)
    >>> forest.n_estimators, forest.inbag_counts_.shape
    (50, (50, 200))
    >>> bool(np.allclose(forest.predict(X), (20 * a.predict(X) + 30 * b.predict(X)) / 50))
    True
    >>> combine(a, a)
    Traceback (most recent call last):
        ...
    ValueError: two of the forests were fitted with the same seed and so grew the same trees
    """
    if not forests:
        raise ValueError("combine needs at least one forest")
    first = forests[0]
    for k, forest in enumerate(forests):
        if not isinstance(forest, _BaseForest):
            raise TypeError(f"combine takes pyinterp forests; argument {k} is {type(forest).__name__}")
        check_is_fitted(forest, "_forest")
        if type(forest) is not type(first):
            raise TypeError(f"combine takes forests of one kind: argument {k} is a {type(forest).__name__}, "
                            f"argument 0 a {type(first).__name__}")
        core, core0 = forest._forest, first._forest
        if core.criterion != core0.criterion:
            raise ValueError(f"forest {k} splits by {core.criterion.name}, forest 0 by {core0.criterion.name}")
        if (core.n_samples, core.n_features) != (core0.n_samples, core0.n_features):
            raise ValueError(f"forest {k} was fitted on {core.n_samples} rows x {core.n_features} features, "
                             f"forest 0 on {core0.n_samples} x {core0.n_features}: not the same data")
        names, names0 = getattr(forest, "feature_names_in_", None), getattr(first, "feature_names_in_", None)
        if (names is None) != (names0 is None) or (names is not None and not np.array_equal(names, names0)):
            raise ValueError(f"forest {k} has other feature names than forest 0")
        if forest.n_outputs_ != first.n_outputs_:
            raise ValueError(f"forest {k} has {forest.n_outputs_} outputs, forest 0 {first.n_outputs_}")
        if hasattr(first, "classes_"):
            classes, classes0 = forest._classes_per_output(), first._classes_per_output()
            if not all(np.array_equal(a, b) for a, b in zip(classes, classes0)):
                raise ValueError(f"forest {k} has classes {_listed(classes)}, forest 0 {_listed(classes0)}")
    seeds = [forest._seed for forest in forests]
    if len(set(seeds)) < len(seeds):
        raise ValueError("two of the forests were fitted with the same seed and so grew the same trees")
    combined = clone(first).set_params(n_estimators=sum(f._forest.n_trees for f in forests), oob_score=False)
    for name in ("n_features_in_", "feature_names_in_", "classes_", "n_classes_", "_seed"):
        if hasattr(first, name):
            setattr(combined, name, getattr(first, name))
    combined._forest = _core.join_forests([f._forest for f in forests])
    return combined


def _listed(classes):
    """Classes per output as a message shows them: one output's list, or a list per output."""
    return classes[0].tolist() if len(classes) == 1 else [c.tolist() for c in classes]
