"""What every column of the command's tables means, in one sentence each, shown under each table of
report.html. Keyed by column header; a key "table:header" holds the meaning of a header in that
table where it differs from the others (the p-values of importances and of interactions)."""

COLUMNS = {
    "rank": "The row's place in the table's order: 1 is the largest MDI-oob (importances) or the smallest "
            "p-value (pairs, triples).",
    "feature": "The column of the input file (a variant ID for genotypes, a gene for AnnData).",
    "interaction": "The features of the interaction, each with the side of its split: x- is x <= its threshold, "
                   "x+ is x > it, and ' & ' joins them; the rule holds where every feature is on its side.",
    "genes": "The genes (from --genes) whose ranges hold the row's variants, one entry per variant in the order of "
             "the interaction, '.' for a variant in no gene and ';' between overlapping genes.",
    "order": "|S|, the number of features in the interaction.",
    "truth": "Simulated data only: whether the signal is made of this feature (relevant, else noise) or is this "
             "interaction (True); the check of what the methods found.",
    # importances
    "mdi_oob": "MDI-oob: each split's impurity decrease measured on the rows out of the tree's bootstrap, averaged "
               "over trees, in units of y's variance (or of impurity for classes); about 0 for a feature without "
               "effect, which plain MDI overrates; larger is more important.",
    "mdi_oob_se": "The standard error of MDI-oob across the trees: an MDI-oob within about two SE of 0 is not told "
                  "apart from no effect.",
    "mdi": "Plain MDI (mean decrease in impurity on the trees' own rows), normalised to sum to 1 over the features "
           "(scikit-learn's feature_importances_); biased towards features with many split points, so compare "
           "the order, not the values, with MDI-oob.",
    "janitza_importance": "The permutation importance behind the p-value: two forests, each fitted on half the "
                          "rows, permute the feature on the half they did not see; about 0 or negative without "
                          "effect.",
    "altmann_importance": "The forest's out-of-bag permutation importance, the statistic Altmann's test compares "
                          "with the same importance from forests refitted on permuted targets.",
    "importances:pvalue": "The chance that a feature without effect gets an importance as high (Janitza's or "
                          "Altmann's test, as the title says); small is evidence of an effect, but read it through "
                          "qvalue when many features are tested.",
    "qvalue": "The Benjamini-Hochberg q-value over every row tested: the rows with q <= 0.1 are a selection whose "
              "expected share of false discoveries is at most 10%.",
    "knockoff_statistic": "The feature's MDI-oob minus that of its knockoff (a synthetic copy without effect): as "
                          "likely negative as positive without effect, large and positive for a feature that "
                          "matters.",
    "knockoff_qvalue": "The least FDR level at which the knockoff+ filter selects the feature (inf: never, its "
                       "statistic is not positive): those with knockoff q <= 0.1 are a selection with at most 10% "
                       "false discoveries expected (when the Gaussian knockoffs are exact).",
    # pair scan, and the held-out tests of --holdout
    "effect": "How much the interaction's cell (the rule) adds to y, or to the share of the class, beyond the "
              "additive model of its features: the rule's coefficient on top of that model, on the rows tested "
              "(the pair scan's, or the rows held out by --holdout).",
    "pvalue": "The interaction test's p-value: the additive model of the features against the model with the "
              "interaction (pair scan: one mean per cell of the two columns' levels, HC2 score test; LSSFind and "
              "iRF: the rule on the rows held out by --holdout); small means the features do not act separately.",
    "threshold_1": "The cut of the interaction's first feature, in its units (the side is the sign in the "
                   "interaction: - at or below, + above).",
    "threshold_2": "The cut of the interaction's second feature, in its units.",
    "threshold_3": "The cut of the interaction's third feature, in its units.",
    "n": "The rows with both features' values (not missing) that the pair's test used.",
    "triples:n": "The rows with all three features' values (not missing) that the triple's test used.",
    "triples:effect": "How much the rule's cell adds to y, or to the share of the class, beyond the model of every "
                      "pair of its three features (main effects and pairwise interactions), on the scan's rows.",
    "triples:pvalue": "The three-way interaction test's p-value: the model of every pair of the three features "
                      "against one mean per cell of their 27 (HC2 score test); small means the three act together "
                      "in a way no pair of them explains.",
    # LSSFind
    "dwp": "Depth-weighted prevalence: the chance that a walk down a random tree, taking either side of each "
           "split with probability 1/2, ends in a leaf whose path (its splits that cut the impurity by more than "
           "epsilon) holds the signed set; at most 2^-|S|, reached by a true interaction of the LSS model.",
    "adjusted_dwp": "2^|S| DWP: 1 for a true LSS interaction, less for other sets; LSSFind's test keeps the sets "
                    "at or above 1 - eta (0.99).",
    "rho": "log2(DWP) / |S|, at most -1 (the bound 2^-|S|): the rank mode orders every mined set by it, largest "
           "first, across orders.",
    "minimal": "True for a basic interaction: a set passing the test that holds no smaller passing set (the other "
               "passing sets are its sub-sets or unions).",
    # iRF (style rules, R and pyinterp)
    "stability": "The share of bootstrap replicates whose random intersection trees found the set; 1 is found "
                 "in every replicate.",
    "prevalence": "The share of the class-of-interest rows (for a continuous y, those above the cut) that fall in "
                  "leaves whose path holds the set; higher is more common on the forest's paths.",
    "precision": "The share of the class of interest among the rows in leaves whose path holds the set: how pure "
                 "the rule's region is (compare with the class's share overall).",
    "cpe": "log(prevalence on the class-of-interest rows / prevalence on the other rows): above 0 the set is more "
           "common on the paths of the class than of the rest; R iRF orders its table by it.",
    "sta_cpe": "The share of bootstrap replicates with cpe > 0.",
    "fsd": "log prevalence(S) - the sum of log prevalence(j) over its features: above 0 the features occur "
           "together on the class's paths more often than if independent, as an interaction's do.",
    "sta_fsd": "The share of bootstrap replicates with fsd > 0; R iRF keeps sets above one half.",
    "mip": "The least gain in log precision over the set without one of its features: above 0 every feature "
           "makes the rule purer.",
    "sta_mip": "The share of bootstrap replicates with mip > 0; R iRF keeps sets above one half.",
    "direction": "+1: found on the leaves of the class of interest (y above the cut); -1: on the other leaves, "
                 "a rule that lowers y or predicts another class, its scores read with the sides swapped.",
    "tier": "0: a rule (passes R iRF's filters, nothing nested in or around it takes its place); 1: nested in or "
            "around a rule or on its other side; 2: fails the filters (stability, sta_fsd, sta_mip at least one "
            "half). The default order is by tier, then cpe.",
}


def explain(table, header):
    """The sentence for a header of a table, or None."""
    return COLUMNS.get(f"{table}:{header}", COLUMNS.get(header))
