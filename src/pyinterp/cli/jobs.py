"""The command line's jobs: a forest with its importances (MDI-oob beside MDI), and interactions by
LSSFind and iRF. Each prints what it did, adds its table to the report and says what it skipped and
why."""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np

from ..forest import RandomForestClassifier, RandomForestRegressor
from ..importance import mdi_oob
from ..interactions import IterativeRandomForest, LSSFind, NoInteractionWarning, screen_pairs
from ..interactions.irf import TABLE_ORDER, r_conventions, why_none
from ..interactions.rule_tiers import FILTERS, MIP_SHARE
from .._knockoffs import best_s_method
from .._rows import split_rows, take_rows
from ..significance import importance_pvalues, interaction_pvalues, knockoff_filter
from ..plotting import (plot_importances, plot_interaction_network, plot_interaction_response, plot_irf_scores,
                        plot_lssfind)
from ..plotting._base import shortened
from .data import DataError, listing
from .figures import draw

# Characters of a feature name or interaction label in a printed table; the CSV files hold them whole.
SHOWN = 60


def _printed(label):
    """A feature name or an interaction's label in at most SHOWN characters: each feature of an
    interaction shortened alike (keeping its end, where its sign is), so none of them is lost."""
    features = str(label).split(" & ")
    if len(" & ".join(features)) <= SHOWN or len(features) == 1:
        return shortened(label, SHOWN)
    width = max(5, (SHOWN - 3 * (len(features) - 1)) // len(features))
    return " & ".join(shortened(feature, width) for feature in features)


class Truth:
    """The features and interactions that carry the signal of simulated data."""

    def __init__(self, interactions):
        self.interactions = set(interactions)
        self.features = {k for s in interactions for k, _ in s}


def _options(args, data):
    """The estimators' keywords the command line sets for every fit."""
    options = {"n_jobs": args.n_jobs, "random_state": args.random_state, "verbose": int(args.verbose)}
    if args.max_features is not None:
        options["max_features"] = args.max_features
    if data.always:
        options["always_split_features"] = list(data.always)
    if data.categories is not None:
        options["categorical_features"] = data.categories
    return options


def _shown(finder, data, args):
    """The fitted finder as the report shows it: without the interactions that hold a covariate
    searched at every split (a shallow copy whose tables leave them out), unless
    --covar-interactions asks for them. The finder's forest is the one fitted."""
    if not data.always or args.covar_interactions:
        return finder
    always = set(data.always)
    shown = copy.copy(finder)
    for name in ("interactions_", "selected_", "minimal_"):
        if hasattr(finder, name):
            table = getattr(finder, name)
            setattr(shown, name, table.select([not any(k in always for k, _ in f) for f in table.features]))
    return shown


def importances(data, args, report, truth=None):
    Forest = RandomForestRegressor if data.task == "regression" else RandomForestClassifier
    forest = Forest(n_estimators=args.n_estimators, oob_score=True, **_options(args, data))
    start = time.perf_counter()
    forest.fit(data.X, data.y)
    score_name = "R^2" if data.task == "regression" else "accuracy"
    report.say(f"Fitted {args.n_estimators} trees in {time.perf_counter() - start:.2f} s; out-of-bag {score_name} = "
               f"{forest.oob_score_:.3f}")

    mdi = forest.feature_importances_
    start = time.perf_counter()
    debiased, se = mdi_oob(forest, data.X, data.y, return_std=True, n_jobs=args.n_jobs)
    elapsed = time.perf_counter() - start
    order = np.argsort(-debiased, kind="stable")
    names = data.names
    test = _significance(data, args, report, Forest)
    knockoffs = _knockoffs(data, args, report, Forest)
    # (table column, printed heading or None, printed width and format, values) of each test run
    tested = ([] if test is None else [(f"{test.method}_importance", None, 0, "", test.importances),
                                       ("pvalue", "p-value", 9, ".2e", test.pvalues),
                                       ("qvalue", "q-value", 8, ".3f", test.qvalues)])
    tested += ([] if knockoffs is None else [("knockoff_statistic", None, 0, "", knockoffs.statistics),
                                             ("knockoff_qvalue", "KO q", 6, ".3f", knockoffs.qvalues)])
    truth_column = ["truth"] if truth else []
    rows = [(rank, names[j], float(debiased[j]), float(se[j]), float(mdi[j]), *(float(c[4][j]) for c in tested),
             *(["relevant" if j in truth.features else "noise"] if truth else []))
            for rank, j in enumerate(order, 1)]
    header, cells = _with_genes(data, ["rank", "feature", "mdi_oob", "mdi_oob_se", "mdi", *(c[0] for c in tested),
                                       *truth_column], rows, [[j] for j in order], 2)
    report.add_table("importances", "Feature importances: MDI-oob (debiased with out-of-bag rows) beside MDI"
                     + ("" if test is None else f", and the p-values of {_TESTS[test.method]}")
                     + ("" if knockoffs is None else ", and the knockoff filter's statistics and q-values"),
                     header, cells)
    top = rows[: args.top]
    printed = [k for k, c in enumerate(tested) if c[1]]
    report.say(f"\nTop {len(top)} of {len(rows)} features by MDI-oob (debiased with out-of-bag rows, {elapsed:.3f} s; "
               f"SE across trees), with MDI{'' if test is None else ', p-values and q-values'}"
               f"{'' if knockoffs is None else ', knockoff q-values'}:")
    report.say(f"  {'rank':>4}  {'feature':<20} {'MDI-oob':>9} {'SE':>8} {'MDI':>8}"
               + "".join(f" {tested[k][1]:>{tested[k][2]}}" for k in printed) + ("  truth" if truth else ""))
    for rank, name, value, error, plain, *rest in top:
        tested_values, mark = rest[:len(tested)], rest[len(tested):]
        if data.genes and name in data.genes:
            name = f"{name} ({data.genes[name]})"
        report.say(f"  {rank:>4}  {_printed(name):<20} {value:>9.4f} {error:>8.4f} {plain:>8.4f}"
                   + "".join(f" {tested_values[k]:>{tested[k][2]}{tested[k][3]}}" for k in printed)
                   + (f"  {mark[0]}" if mark else ""))
    draw(report, "importances", "MDI-oob with its standard error, beside MDI", plot_importances, forest, data.X,
         data.y, top=min(args.top, 20), n_jobs=args.n_jobs)
    if truth:
        k = len(truth.features)
        for label, scores in (("MDI-oob", debiased), ("MDI", mdi)):
            found = len(truth.features & set(np.argsort(-scores, kind="stable")[:k].tolist()))
            report.say(f"{found} of the {k} relevant features are the top {k} by {label}.")


# What each test's p-value is of, as the report says it.
_TESTS = {"janitza": "Janitza's hold-out test", "altmann": "Altmann's permutation test"}
# Janitza's null is made of the features without effect: below this many features, auto leaves it out.
JANITZA_MIN_FEATURES = 200


def _significance(data, args, report, Forest):
    """importance_pvalues by --pvalues (auto: Janitza's test when there are enough features for its
    null), with the sentences saying what the p-values and q-values are; None when not run."""
    method = args.pvalues
    p = len(data.names)
    if method == "auto":
        method = "janitza" if p >= JANITZA_MIN_FEATURES else "none"
        if method == "none":
            report.say(f"\nNo p-values: Janitza's test draws its null from the features without effect and needs "
                       f"many ({JANITZA_MIN_FEATURES} or more; this file has {p}); --pvalues altmann refits the "
                       f"forest on {args.n_permutations} permutations of the target instead.")
    if method == "none":
        return None
    forest = _test_forest(Forest, args, data)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:  # said in the report, beside the p-values
        warnings.simplefilter("always", UserWarning)
        test = importance_pvalues(forest, data.X, data.y, method=method, n_permutations=args.n_permutations,
                                  random_state=args.random_state, n_jobs=args.n_jobs)
    elapsed = time.perf_counter() - start
    if method == "janitza":
        report.say(f"\np-values ({elapsed:.2f} s): Janitza's hold-out test. Two forests, each fitted on half the rows, "
                   "give each feature's permutation importance on the half they did not see (janitza_importance); "
                   f"the negative ones, mirrored, are the null of the {len(test.null)} values it is compared with. "
                   "A p-value is the chance that a feature without effect scores as high.")
    else:
        report.say(f"\np-values ({elapsed:.2f} s): Altmann's test. The forest's out-of-bag permutation importance "
                   f"(altmann_importance) against its {args.n_permutations} refits on permuted targets. A p-value is "
                   "the chance that a feature without effect scores as high.")
    for warning in caught:
        report.say(f"  Note: {warning.message}.")
    chosen = len(test.selected(0.1))
    report.say(f"q-values: Benjamini-Hochberg; the {chosen} features with q <= 0.1 are a selection whose expected "
               "share of false discoveries is at most 10%.")
    smallest = float(test.pvalues.min())
    if not chosen:
        needed = int(np.ceil(p * smallest / 0.1 - 1e-9))
        report.say(f"  None has q <= 0.1: the smallest p-value is {smallest:.2g}, and at that p-value Benjamini-Hochberg "
                   f"selects only groups of {needed} features or more (the smallest p-value a test can give is "
                   "1 / (N + 1) for a null of N values).")
    return test


def _test_forest(Forest, args, data):
    """The forest a test refits (cloned, seeded per fit), silent: the command line's settings."""
    return Forest(n_estimators=args.n_estimators, **{k: v for k, v in _options(args, data).items() if k != "verbose"})


def _knockoffs(data, args, report, Forest):
    """knockoff_filter under --knockoffs, with the sentences saying what its columns are; None
    when not asked for. The S-matrix is knockpy's MVR when knockpy is installed, else the
    equicorrelated one, and the report says which."""
    if not args.knockoffs:
        return None
    s_method = best_s_method()
    forest = _test_forest(Forest, args, data)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            test = knockoff_filter(forest, data.X, data.y, s_method=s_method, random_state=args.random_state,
                                   n_jobs=args.n_jobs)
        except ValueError as error:  # missing values, a constant column: the other tables still come
            report.say(f"\nNo knockoffs: {error}.")
            return None
    report.say(f"\nKnockoffs ({time.perf_counter() - start:.2f} s): a forest fitted beside a Gaussian knockoff copy of "
               f"every feature ({s_method} S-matrix{'' if s_method == 'mvr' else '; knockpy would give MVR'}); "
               "knockoff_statistic is a feature's MDI-oob minus its copy's, as likely negative as positive for a "
               "feature without effect.")
    for warning in caught:
        report.say(f"  Note: {warning.message}.")
    report.say(f"knockoff_qvalue: the least FDR level at which the knockoff+ filter selects the feature; the "
               f"{len(test.selected(0.1))} features with knockoff q <= 0.1 are a selection whose expected share of "
               "false discoveries is at most 10% when the knockoffs are exact (X Gaussian). It selects 10 features "
               "or more at 0.1, or none.")
    return test


def _with_genes(data, header, rows, columns, at):
    """header and rows with a 'genes' column at position `at` under --genes: per row, the genes of
    its columns (the features of an interaction), ', '-joined, '.' for a variant in no gene."""
    if data.genes is None:
        return header, rows
    cells = [", ".join(data.genes.get(data.names[k], ".") for k in row_columns) for row_columns in columns]
    return [*header[:at], "genes", *header[at:]], [(*row[:at], cell, *row[at:]) for row, cell in zip(rows, cells)]


def _interaction_rows(table, columns, truth, tested=None):
    """Rows of an interaction table: label, order, the score columns, then (with --holdout) the
    held-out test's effect, p-value and q-value (NaN for single features), then the truth."""
    def test_columns(features):
        if tested is None:
            return []
        return list(tested.get(features, (np.nan, np.nan, np.nan)))

    return [(table.label(r.features), len(r.features), *(float(getattr(r, c)) for c in columns),
             *test_columns(r.features), *([_is_true(r, truth)] if truth else []))
            for r in table]


def _is_true(record, truth):
    """Whether a record is a simulated rule: its signed set, found raising y (iRF's direction +1)."""
    return record.features in truth.interactions and getattr(record, "direction", 1) > 0


TESTED = ["effect", "pvalue", "qvalue"]


def _split(data, args):
    """(rows to fit the finder on, held-out rows to test its interactions on): --holdout's share of
    the rows, drawn with --random-state (within each class for classes); (all rows, None) without."""
    if args.holdout is None:
        return data, None
    held, kept = split_rows(data.y, lambda m: int(round(args.holdout * m)), data.task == "classification",
                            np.random.RandomState(args.random_state))
    if len(held) < 10 or len(kept) < 10:
        raise DataError(f"--holdout {args.holdout} leaves {len(kept)} rows to fit and {len(held)} to test; both need "
                        "10 or more")
    part = lambda rows: data._replace(X=take_rows(data.X, rows), y=data.y[rows])  # noqa: E731
    return part(kept), part(held)


def _tested(finder, table, held, report, name):
    """{features: (effect, p-value, q-value)} of the table's interactions on the held-out rows, and
    the sentences saying what they are; None without --holdout."""
    if held is None:
        return None
    tested = interaction_pvalues(finder, held.X, held.y, interactions=table)
    report.say(f"  p-values of {name}'s interactions on the {len(held.y)} held-out rows it was not fitted on: each rule "
               "(effect: what its cell adds) against the additive model of its features (a step function each) "
               "and its sub-rules; q-values: Benjamini-Hochberg over the "
               f"{int(np.sum(~np.isnan(tested['pvalue'])))} interactions tested.")
    return {r.features: (float(r.effect), float(r.pvalue), float(r.qvalue)) for r in tested}


def lssfind(data, args, report, truth=None):
    if data.task != "regression":
        report.say("\nLSSFind skipped: it finds interactions of a continuous response (regression); the target is "
                   "classes. iRF below takes classes.")
        return
    start = time.perf_counter()
    fit_data, held = _split(data, args)
    lss = LSSFind(n_estimators=args.lss_estimators, max_order=args.max_order, mode=args.lss_mode,
                  **_options(args, data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lss.fit(fit_data.X, fit_data.y)
    empty = None  # the find test's NoInteractionWarning, said below in the report's words
    for w in caught:
        if issubclass(w.category, NoInteractionWarning):
            empty = w.message
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    lss = _shown(lss, data, args)
    ranked = args.lss_mode == "rank"
    selected, minimal = lss.selected_, set(lss.minimal_.features)
    table = lss.interactions_[:PAIR_ROWS] if ranked else selected
    truth_column = ["truth"] if truth else []
    if ranked:
        found = (f"{len(lss.interactions_)} mined sets ranked by rho = log2(DWP) / |S|, {len(selected)} with "
                 f"2^|S| DWP >= 0.99; the first {min(args.top, len(table))}:")
    else:
        found = f"{len(selected)} sets with 2^|S| DWP >= 0.99, {len(minimal)} minimal:" if len(selected) else "no set."
    tried = "all features" if args.max_features is None else f"max_features={args.max_features}"
    report.say(f"\nLSSFind ({args.lss_estimators} trees, {tried} per split, eps 0.01, eta 0.01, order <= {args.max_order}"
               f"{'' if held is None else f', on {len(fit_data.y)} rows'}) in {time.perf_counter() - start:.2f} s: "
               f"{found}")
    tested = _tested(lss, table[: args.top] if ranked else table, held, report, "LSSFind") if len(table) else None
    rows = _interaction_rows(table, ("dwp", "adjusted_dwp", "rho"), truth, tested)
    rows = [(*row[:5], r.features in minimal, *row[5:]) for row, r in zip(rows, table)]
    header, cells = _with_genes(data, ["interaction", "order", "dwp", "adjusted_dwp", "rho", "minimal",
                                       *([] if tested is None else TESTED), *truth_column],
                                rows, [_unsigned(r.features) for r in table], 1)
    title = ("LSSFind: mined signed sets ranked by rho = log2(DWP) / |S| (minimal: basic interactions among those "
             "passing 2^|S| DWP >= 1 - eta)" if ranked else
             "LSSFind: signed sets with 2^|S| DWP >= 1 - eta (minimal = basic interactions)")
    report.add_table("lssfind", title + ("" if tested is None else "; held-out tests of the rules"), header, cells)
    for r in (table[: args.top] if ranked else lss.minimal_):
        mark = ("  true" if r.features in truth.interactions else "") if truth else ""
        result = tested.get(r.features) if tested is not None and len(r.features) >= 2 else None
        test = "" if result is None else f"  p = {result[1]:.2g}"
        rho = f"  rho = {r.rho:.4f}" if ranked else ""
        label = _printed(lss.interactions_.label(r.features))
        report.say(f"  {label:<40} 2^|S| DWP = {r.adjusted_dwp:.4f}{rho}{test}{mark}")
    draw(report, "lssfind", "LSSFind: DWP of the mined sets against 2^-|S|", plot_lssfind, lss, top=args.top)
    pairs = [r.features for r in lss.minimal_ if len(r.features) == 2]
    if pairs:
        draw(report, "lssfind_response", f"The mean response on {lss.minimal_.label(pairs[0])}",
             plot_interaction_response, lss.rule(pairs[0]), data.X, data.y)
    if empty is not None:
        closest = ("" if empty.best is None else
                   f" (the highest is {empty.best[1]:.3f}, of {empty.best[0]})")
        report.say(f"  No set of up to {args.max_order} signed features holds 2^|S| DWP >= 0.99{closest}: the response "
                   "is not a union of Boolean interactions at the forest's thresholds (the LSS model), or noise or "
                   "too few trees (--lss-estimators) keep DWP below the test. --lss-mode rank ranks every mined set "
                   "by rho instead; iRF ranks interactions without that assumption.")
    elif not ranked and all(len(f) == 1 for f in minimal):
        report.say("  Every minimal set is one feature: main effects, no interaction of two or more features.")


_WHOLE = ("tier", "direction")  # iRF's columns of whole numbers


def irf(data, args, report, truth=None):
    start = time.perf_counter()
    fit_data, held = _split(data, args)
    model = IterativeRandomForest(n_iterations=args.n_iterations, n_estimators=args.n_estimators, task=data.task,
                                  n_bootstraps=args.n_bootstraps,
                                  rit_depth=args.rit_depth, rit_n_trees=args.rit_trees,
                                  class_id=_class_of_interest(data, args), **_options(args, data))
    with warnings.catch_warnings():  # an empty table is said below, in the report's words
        warnings.simplefilter("ignore", NoInteractionWarning)
        model.fit(fit_data.X, fit_data.y)
    model = _shown(model, data, args)
    table = model.interactions_
    scores = table.columns
    keys = TABLE_ORDER[model.style]
    order = ", then ".join(keys)
    top = table[: args.top]
    found = f"top {len(top)} of {len(table)} by {order}:" if len(table) else "no interaction."
    if model.classification_:
        interest = f"{model.class_id_}" + ("" if args.class_of_interest is not None
                                           else " (the last class; --class-of-interest sets it)")
    else:
        interest = (f"y {'>=' if r_conventions(model) else '>'} {model.cut_:.4g} (iRF cuts a continuous response at "
                    "its median)")
    if (table["direction"] < 0).any():
        others = [c for c in model.classes_ if c != model.class_id_] if model.classification_ else None
        interest += ("; direction -1: rules that lower y (found on the leaves below the cut)" if others is None else
                     f"; direction -1: rules of {others[0]} (found on its leaves)" if len(others) == 1 else
                     "; direction -1: rules of the other classes (found on their leaves)")
    report.say(f"\nIterative random forest, class of interest: {interest}")
    report.say(f"Iterative random forest ({args.n_iterations} iterations, {args.n_estimators} trees, "
               f"{model.n_bootstraps_} bootstraps of {model.bootstrap_n_estimators_} trees, "
               f"{args.rit_trees} RITs of depth {args.rit_depth}"
               f"{'' if held is None else f', on {len(fit_data.y)} rows'}) in {time.perf_counter() - start:.2f} s, "
               f"iteration {model.selected_iteration_ + 1} selected; {found}")
    if keys[0] == "tier" and len(table):
        report.say(f"  (tier 0: rules, passing R iRF's filters, with sta_mip above {MIP_SHARE} where R asks 0.5, "
                   "and with no set nested in or around them, or on their other side, taking their place, ordered "
                   "by cpe; 1: such sets; 2: sets the filters drop)")
        if not (table["tier"] == 0).any():
            report.say(f"  No set is a rule (tier 0): none passed the filters ({FILTERS}), so the sets below are "
                       "frequent on the paths, not rules.")
    tested = _tested(model, table, held, report, "iRF") if len(table) else None
    header, cells = _with_genes(
        data, ["interaction", "order", *scores, *([] if tested is None else TESTED), *(["truth"] if truth else [])],
        _interaction_rows(table, scores, truth, tested), [_unsigned(r.features) for r in table], 1)
    report.add_table("irf", f"Iterative random forest: interactions by {order}"
                     + ("" if tested is None else "; held-out tests of the rules"), header, cells)
    if not len(table):
        reason = why_none(model)
        report.say(f"  {reason[0].upper()}{reason[1:]}")
        _say_no_holdout(report, held)
        return
    drawn = table[: min(args.top, 20)]
    draw(report, "irf_scores", "iRF: stability, prevalence and precision", plot_irf_scores, model,
         top=len(drawn), panels=True, size=(10.0, 1.5 + 0.3 * len(drawn)),
         labels=[drawn.label(f) for f in drawn.features])
    draw(report, "irf_network", "iRF: features joined by stable interactions", plot_interaction_network, model,
         size=(6.0, 6.0), wrap=24)
    # the sort keys first
    shown = [*keys, *(c for c in ("stability", "prevalence", "precision", "direction") if c not in keys)]
    report.say(f"  {'interaction':<40}" + "".join(f" {c:>10}" for c in shown)
               + ("" if tested is None else f" {'p-value':>10}"))
    for r in top:
        mark = ("  true" if _is_true(r, truth) else "") if truth else ""
        test = "" if tested is None else f" {tested.get(r.features, (0, np.nan))[1]:>10.2g}"
        cells = "".join(f" {getattr(r, c):>10d}" if c in _WHOLE else f" {getattr(r, c):>10.3f}" for c in shown)
        report.say(f"  {_printed(table.label(r.features)):<40}" + cells + test + mark)
    _say_no_holdout(report, held)


def _say_no_holdout(report, held):
    if held is None:
        report.say("  (No p-values for interactions: --holdout 0.5 fits LSSFind and iRF on half the rows and tests "
                   "their rules on the other half.)")


# Rows of the pair table written to CSV (every pair tested counts in its q-values).
PAIR_ROWS = 1000


def pairs(data, args, report, truth=None):
    """Every pair of the columns tested for interaction (pair_scan); with more than --screen
    columns, those a forest ranks first on some rows, tested on the others, and the data the later
    steps (LSSFind, iRF) fit narrowed to them. Returns that data (None: unchanged)."""
    if data.task == "classification" and len(np.unique(data.y)) > 2:
        report.say(f"\nPair scan skipped: it tests two classes or a number; the target has {len(np.unique(data.y))} "
                   "classes.")
        return None
    p = len(data.names) - len(data.always)
    start = time.perf_counter()
    found = screen_pairs(data.X, data.y, n_features=args.screen, max_features=args.max_features or "sqrt",
                         always_split_features=list(data.always) or None, categorical_features=data.categories,
                         triples=args.triples, top=PAIR_ROWS, max_pairs=args.max_pairs,
                         random_state=args.random_state, n_jobs=args.n_jobs, verbose=int(args.verbose))
    elapsed = time.perf_counter() - start
    adjusted = " (y without the covariates' linear share)" if data.always else ""
    if found.forest is None:
        report.say(f"\nPair scan ({elapsed:.2f} s): every pair of the {p} columns, {found.scan.n_pairs} tested on all "
                   f"{len(data.y)} rows{adjusted}.")
    else:
        report.say(f"\nPair scan ({elapsed:.2f} s): a forest of {found.forest.n_estimators} trees on {len(found.screen_rows)} rows "
                   f"ranked the {p} columns by MDI-oob; every pair of the first {len(found.features)}, "
                   f"{found.scan.n_pairs} pairs, tested on the other {len(found.scan_rows)} rows{adjusted}, so the "
                   f"selection does not bias their p-values. LSSFind and iRF below fit on the first "
                   f"{min(args.fit_columns, len(found.features))} of those columns (--fit-columns).")
    share = f", on the share of class '{np.unique(data.y)[1]}'" if data.task == "classification" else ""
    report.say("  Each pair: the additive model of its two columns (a step per genotype or tertile) against one mean "
               "per cell of their levels (HC2 score test); its rule: the cuts whose cell adds most to the additive "
               f"model (effect{share}). q-values: Benjamini-Hochberg over every pair tested.")
    _scan_table(data, args, report, truth, "pairs", found.scan.interactions, found.scan.n_pairs, "pair")
    if found.triples is not None:
        report.say(f"\nTriple scan: the first {args.triples} pairs each with every other of the {len(found.features)} "
                   f"columns (--triples), {found.triples.n_triples} triples, on the same rows. Each triple: its three "
                   "pairs' cells (main effects and pairwise interactions) against one mean per cell of the 27 (HC2 "
                   "score test): an interaction no pair of its columns explains.")
        _scan_table(data, args, report, truth, "triples", found.triples.interactions, found.triples.n_triples,
                    "triple")
    if found.forest is None:
        return None
    kept = np.sort(found.features[:args.fit_columns])  # found.features: by decreasing MDI-oob
    columns_kept = np.concatenate([kept, np.asarray(data.always, dtype=np.int64)])
    return data._replace(X=_columns_of(data.X, columns_kept), names=[data.names[j] for j in columns_kept],
                         always=tuple(range(len(kept), len(columns_kept))))


def _scan_table(data, args, report, truth, name, table, n_tested, what):
    """A pair or triple scan's table: printed (--top rows), and written with PAIR_ROWS rows."""
    selected = int(np.sum(table["qvalue"] <= 0.1))
    report.say(f"  {selected} {what}s have q <= 0.1." + ("" if selected else " None is distinguishable from chance."))
    truth_column = ["truth"] if truth else []
    true_sets = {_unsigned(f) for f in truth.interactions} if truth else set()
    thresholds = [c for c in table.columns if c.startswith("threshold_")]
    columns = ("effect", "pvalue", "qvalue", *thresholds, "n")
    unsigned = [_unsigned(r.features) for r in table]
    rows = [(rank, table.label(r.features), *(float(getattr(r, c)) for c in columns),
             *([found in true_sets] if truth else []))
            for rank, (r, found) in enumerate(zip(table, unsigned), 1)]
    header, cells = _with_genes(data, ["rank", "interaction", *columns, *truth_column], rows, unsigned, 2)
    report.add_table(name, f"{what.capitalize()} scan: the {len(rows)} {what}s with the smallest p-values of "
                     f"{n_tested} tested", header, cells)
    report.say(f"  {'interaction':<40} {'effect':>8} {'p-value':>10} {'q-value':>8}")
    for rank, label, effect, pvalue, qvalue, *rest in rows[: args.top]:
        mark = ("  true" if rest[-1] else "") if truth else ""
        report.say(f"  {_printed(label):<40} {effect:>8.3f} {pvalue:>10.2e} {qvalue:>8.2g}{mark}")


def _unsigned(features):
    """A signed interaction's features without their signs."""
    return tuple(k for k, _ in features)


def _columns_of(X, columns):
    """Columns of any X the command reads (packed genotypes, AnnData, arrays, DataFrames)."""
    if hasattr(X, "iloc"):
        return X.iloc[:, columns]
    return X[:, columns]


def _class_of_interest(data, args):
    """--class-of-interest as the class it names (classes may be numbers; the option is text)."""
    label = args.class_of_interest
    if label is None or data.task != "classification":
        return None
    classes = np.unique(data.y)
    named = [c for c in classes if str(c) == label]
    if not named:
        raise DataError(f"--class-of-interest {label!r} is not a class of the target; its classes are "
                        f"{listing(classes)}")
    return named[0]

