"""PLINK filesets on the command line and their phenotype and list files (pyinterp.io.phenotypes,
pyinterp.io.lists, pyinterp.cli.genotypes): samples matched by ID with every drop counted, PLINK's
case/control coding, --keep/--remove/--extract/--exclude, and one-line errors naming the file."""

import re

import numpy as np
import pandas as pd
import pytest
from conftest import read_csv_exact

from pyinterp import RandomForestClassifier, RandomForestRegressor, cli
from pyinterp.importance import mdi_oob
from pyinterp.io import read_pheno, read_plink

bed_reader = pytest.importorskip("bed_reader", reason="bed-reader (the test extras) writes the .bed files")

N, P = 240, 60


@pytest.fixture
def cohort(tmp_path):
    """A fileset whose .fam holds a case/control phenotype driven by rs10 & rs20, and a phenotype
    file with a quantitative trait: 5 samples absent, 6 missing (NA or -9), 1 not genotyped."""
    rng = np.random.default_rng(0)
    G = rng.binomial(2, rng.uniform(0.2, 0.5, P), size=(N, P)).astype(np.float32)
    risk = 2.0 * (G[:, 10] > 0) * (G[:, 20] > 0) + 0.5 * rng.standard_normal(N)
    case = np.where(risk > 1.0, 2, 1)
    G[rng.random((N, P)) < 0.02] = np.nan
    bed_reader.to_bed(tmp_path / "cohort.bed", G, properties={
        "fid": [f"F{i}" for i in range(N)], "iid": [f"S{i}" for i in range(N)],
        "sid": [f"rs{k}" for k in range(P)], "pheno": case.astype(str)})
    trait = 3.0 * (np.nan_to_num(G[:, 10]) > 0) + rng.standard_normal(N)
    lines = ["FID IID trait age"]
    for i in range(N):
        if i % 48 == 1:
            continue  # 5 absent
        value = "NA" if i % 40 == 3 else ("-9" if i == 5 else f"{trait[i]:.6f}")
        lines.append(f"F{i} S{i} {value} {20 + i % 30}")
    lines.append("F999 S999 1.0 40")
    (tmp_path / "pheno.txt").write_text("\n".join(lines) + "\n")
    return tmp_path, G, case - 1, trait


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_fam_phenotype_gives_the_forest_of_the_same_genotypes_in_memory(cohort, capsys):
    folder, G, y, _ = cohort
    code, out, err = run(capsys, "importance", folder / "cohort.bed", "--n-estimators", 30, "--n-jobs", 1,
                         "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert (f"n={N} samples, p={P} variants (read in place), phenotype 'phenotype' from cohort.fam "
            "(classification") in out
    assert f"class 1 is the cases ({int(y.sum())}), class 0 the controls ({int(N - y.sum())})" in out
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    forest = RandomForestClassifier(n_estimators=30, oob_score=True, random_state=0, n_jobs=1).fit(G, y)
    expected = mdi_oob(forest, G, y)
    np.testing.assert_array_equal(table.loc[[f"rs{k}" for k in range(P)], "mdi_oob"].to_numpy(), expected)
    assert set(table.index[:2]) == {"rs10", "rs20"}


def test_a_phenotype_file_is_matched_by_sample_with_every_drop_counted(cohort, capsys):
    folder, G, _, trait = cohort
    (folder / "keep.txt").write_text("".join(f"F{i} S{i}\n" for i in range(0, N, 2)))
    (folder / "snps.txt").write_text("rs10\nrs20\nrs30\nrs_absent\n")
    code, out, err = run(capsys, "importance", folder / "cohort.bed", "--pheno", folder / "pheno.txt",
                         "--pheno-name", "trait", "--keep", folder / "keep.txt", "--exclude", folder / "snps.txt",
                         "--n-estimators", 20, "--n-jobs", 1, "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert f"{N - 5 - 7} of the {N} genotyped samples have trait; 5 are not in" in out
    assert "; 7 have it missing; 1 of" in out
    assert f"--keep {folder / 'keep.txt'}: {N // 2} of the {N} samples named" in out
    assert "--exclude" in out and "3 of the 60 variants named (1 of its IDs are not in the .bim)" in out
    rows = [i for i in range(0, N, 2) if i % 48 != 1 and i % 40 != 3 and i != 5]
    assert f"n={len(rows)} samples, p={P - 3} variants" in out
    columns = [k for k in range(P) if k not in (10, 20, 30)]
    X = G[np.ix_(rows, columns)]
    target = np.array([float(f"{trait[i]:.6f}") for i in rows])
    forest = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0, n_jobs=1).fit(X, target)
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    np.testing.assert_array_equal(table.loc[[f"rs{k}" for k in columns], "mdi_oob"].to_numpy(),
                                  mdi_oob(forest, X, target))


@pytest.mark.parametrize("text, fid, names", [
    ("FID IID a b\nf1 s1 1 2\nf2 s2 3 4\n", ["f1", "f2"], ["a", "b"]),
    ("#FID IID a\nf1 s1 1\nf2 s2 3\n", ["f1", "f2"], ["a"]),
    ("#IID a b\ns1 1 2\ns2 3 4\n", None, ["a", "b"]),
    ("f1 s1 1 2\nf2 s2 3 4\n", ["f1", "f2"], ["PHENO1", "PHENO2"]),
])
def test_phenotype_files_in_each_of_plink_s_layouts(tmp_path, text, fid, names):
    (tmp_path / "p.txt").write_text(text)
    table = read_pheno(tmp_path / "p.txt")
    assert (None if table.fid is None else list(table.fid)) == fid
    assert list(table.iid) == ["s1", "s2"] and list(table.columns) == names


def test_samples_are_matched_by_iid_when_the_file_has_no_fid(cohort, capsys):
    folder, G, _, _ = cohort
    (folder / "iid.txt").write_text("#IID score\n" + "".join(f"S{i} {i % 3}\n" for i in range(N)))
    code, out, err = run(capsys, "importance", folder / "cohort.bed", "--pheno", folder / "iid.txt",
                         "--n-estimators", 5, "--n-jobs", 1)
    assert code == 0, err
    # 0/1/2 with 1 and 2 present: PLINK's case/control coding, 0 missing
    assert f"{N - N // 3} of the {N} genotyped samples have score; {N // 3} have it missing" in out


@pytest.mark.parametrize("argv, message", [
    (["--pheno", "{f}/nomatch.txt"], "none of the genotype file's 240 samples is in it (matched by FID and IID; the "
                                     "genotypes' first is 'F0 S0', the file's first 'X1 Y1')"),
    (["--pheno", "{f}/pheno.txt", "--pheno-name", "bmi"], "no phenotype 'bmi'; its columns are trait, age"),
    (["--target", "pheno"], "cohort.fam: no phenotype 'pheno'; its columns are phenotype; give the phenotypes with "
                            "--pheno FILE"),
    (["--pheno", "{f}/ragged.txt"], "ragged.txt, line 3: 3 fields where the header has 4"),
    (["--pheno", "{f}/twice.txt"], "twice.txt: sample F1 S1 on data rows 1 and 2"),
    (["--extract", "{f}/none.txt"], "no variant is left after --extract / --exclude"),
    (["--pheno", "{f}/pheno.txt", "--pheno-name", "trait", "--target", "age"], "--target 'age' and --pheno-name "
                                                                               "'trait' disagree"),
])
def test_bad_phenotype_and_list_files_are_one_line(cohort, capsys, argv, message):
    folder = cohort[0]
    (folder / "nomatch.txt").write_text("FID IID t\nX1 Y1 1.0\n")
    (folder / "ragged.txt").write_text("FID IID a b\nF0 S0 1 2\nF1 S1 1\n")
    (folder / "twice.txt").write_text("FID IID a\nF1 S1 1\nF1 S1 2\n")
    (folder / "none.txt").write_text("rs_nothing\n")
    code, out, err = run(capsys, "importance", folder / "cohort.bed", *[a.format(f=folder) for a in argv])
    assert code == 1 and message in err and err.count("\n") == 1, err


def test_all_missing_fam_phenotypes_ask_for_a_phenotype_file(tmp_path, capsys):
    bed_reader.to_bed(tmp_path / "g.bed", np.zeros((8, 3), np.float32))  # bed-reader writes -9 phenotypes
    code, out, err = run(capsys, "importance", tmp_path / "g.bed")
    assert code == 1 and "every matched sample has phenotype missing; give the phenotypes with --pheno FILE" in err


def test_plink_options_on_a_table_are_refused(tmp_path, capsys):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": [0.0, 1.0, 0.0]}).to_csv(tmp_path / "t.csv", index=False)
    code, out, err = run(capsys, "importance", tmp_path / "t.csv", "--target", "y", "--pheno", "p.txt")
    assert code == 1 and "--pheno is for genotype files (.bed, ...) and AnnData (.h5ad); " in err
    code, out, err = run(capsys, "importance", tmp_path / "t.csv", "--target", "y", "--layer", "counts")
    assert code == 1 and "--layer is for AnnData (.h5ad); " in err


def test_covariate_names_without_a_covariate_file_are_refused(cohort, capsys):
    code, out, err = run(capsys, "importance", cohort[0] / "cohort.bed", "--covar-name", "pc1")
    assert code == 1 and "--covar-name names columns of the covariate file: give it with --covar FILE" in err


def test_the_python_route_matches_by_id_too(cohort):
    from pyinterp.io.phenotypes import match_phenotype

    folder = cohort[0]
    G = read_plink(folder / "cohort.bed")
    matched = match_phenotype(G.sample_table, read_pheno(folder / "pheno.txt"), "age", "pheno.txt")
    assert matched.task == "regression" and len(matched.rows) == N - 5
    np.testing.assert_array_equal(matched.values, [20 + i % 30 for i in range(N) if i % 48 != 1])


def test_a_zero_one_column_is_two_classes_and_plink_s_zero_only_column_is_missing(cohort):
    from pyinterp.io.phenotypes import match_phenotype

    folder = cohort[0]
    G = read_plink(folder / "cohort.bed")
    (folder / "flags.txt").write_text("#IID flag nothing\n" + "".join(f"S{i} {i % 2} 0\n" for i in range(N)))
    table = read_pheno(folder / "flags.txt")
    flag = match_phenotype(G.sample_table, table, "flag", "flags.txt")
    assert flag.task == "classification" and len(flag.rows) == N
    np.testing.assert_array_equal(flag.values, np.arange(N) % 2)
    with pytest.raises(ValueError, match="every matched sample has nothing missing"):
        match_phenotype(G.sample_table, table, "nothing", "flags.txt")


def test_max_features_class_of_interest_and_verbose(cohort, capsys):
    folder, G, y, _ = cohort
    code, out, err = run(capsys, "all", folder / "cohort.bed", "--n-estimators", 25, "--n-jobs", 1, "--max-features",
                         "sqrt", "--out", folder / "out")
    assert (code, err) == (0, ""), err
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    forest = RandomForestClassifier(n_estimators=25, oob_score=True, random_state=0, n_jobs=1,
                                    max_features="sqrt").fit(G, y)
    np.testing.assert_array_equal(table.loc[[f"rs{k}" for k in range(P)], "mdi_oob"].to_numpy(), mdi_oob(forest, G, y))
    assert ("Iterative random forest, class of interest: 1 (the last class; --class-of-interest sets it); "
            "direction -1: rules of 0 (found on its leaves)\n") in out
    code, out, err = run(capsys, "interactions", folder / "cohort.bed", "--n-estimators", 12, "--n-jobs", 1,
                         "--class-of-interest", "0", "--verbose")
    assert code == 0
    assert "Iterative random forest, class of interest: 0; direction -1: rules of 1 (found on its leaves)\n" in out
    assert "iteration" in err  # progress on stderr
    code, out, err = run(capsys, "interactions", folder / "cohort.bed", "--class-of-interest", "case")
    assert code == 1 and "--class-of-interest 'case' is not a class of the target; its classes are 0, 1" in err
    with pytest.raises(SystemExit):
        cli.main(["importance", str(folder / "cohort.bed"), "--max-features", "2.5"])
    assert "must be a positive count or a fraction in (0, 1]" in capsys.readouterr().err


def test_a_plink2_fileset_gives_the_tables_of_the_same_calls_as_a_bed(cohort, capsys):
    pgenlib = pytest.importorskip("pgenlib", reason="pgenlib (the test extras) writes the .pgen")
    folder, G, y, _ = cohort
    counts = np.ascontiguousarray(np.nan_to_num(G, nan=-9).T.astype(np.int8))
    writer = pgenlib.PgenWriter(bytes(folder / "v2.cohort.pgen"), N, variant_ct=P, nonref_flags=False)
    writer.append_biallelic_batch(counts)
    writer.close()
    (folder / "v2.cohort.pvar").write_text("#CHROM\tPOS\tID\tREF\tALT\n"
                                           + "".join(f"1\t{10 * k + 1}\trs{k}\tC\tT\n" for k in range(P)))
    (folder / "v2.cohort.psam").write_text("#FID\tIID\tSEX\tstatus\n"
                                           + "".join(f"F{i}\tS{i}\tNA\t{c + 1}\n" for i, c in enumerate(y)))
    tables = {}
    for name in ("cohort.bed", "v2.cohort.pgen"):
        code, out, err = run(capsys, "importance", folder / name, "--n-estimators", 20, "--n-jobs", 1,
                             "--out", folder / name.replace(".", "_"))
        assert (code, err) == (0, ""), err
        tables[name] = (folder / name.replace(".", "_") / "importances.csv").read_text()
    assert "phenotype 'status' from v2.cohort.psam (classification" in out and "(hardcalls packed)" in out
    assert tables["cohort.bed"] == tables["v2.cohort.pgen"]
    (folder / "v2.cohort.psam").write_text("#IID\tSEX\n" + "".join(f"S{i}\t1\n" for i in range(N)))
    code, out, err = run(capsys, "importance", folder / "v2.cohort.pgen")
    assert code == 1 and "v2.cohort.psam has no phenotype column: give the phenotypes with --pheno FILE" in err


def test_a_vcf_with_a_phenotype_file_gives_the_tables_of_the_same_calls_as_a_bed(cohort, capsys):
    pytest.importorskip("cyvcf2", reason="cyvcf2 (the test extras) reads the VCF")
    folder, G, y, _ = cohort
    lines = ["##fileformat=VCFv4.2", "##contig=<ID=1>",
             '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
             "\t".join(["#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO", "FORMAT"]
                       + [f"S{i}" for i in range(N)])]
    gt = {0.0: "0/0", 1.0: "0/1", 2.0: "1/1"}
    for k in range(P):
        lines.append("\t".join(["1", str(10 * k + 1), f"rs{k}", "C", "T", ".", "PASS", ".", "GT"]
                               + [gt.get(v, "./.") for v in G[:, k]]))
    (folder / "cohort.vcf").write_text("\n".join(lines) + "\n")
    (folder / "status.txt").write_text("#IID status\n" + "".join(f"S{i} {c + 1}\n" for i, c in enumerate(y)))
    code, out, err = run(capsys, "importance", folder / "cohort.vcf")
    assert code == 1 and "a VCF holds no phenotypes: give them with --pheno FILE" in err
    tables = {}
    for name, extra in (("cohort.bed", []), ("cohort.vcf", ["--pheno", folder / "status.txt"])):
        code, out, err = run(capsys, "importance", folder / name, *extra, "--n-estimators", 20, "--n-jobs", 1,
                             "--out", folder / name.replace(".", "_"))
        assert (code, err) == (0, ""), err
        tables[name] = (folder / name.replace(".", "_") / "importances.csv").read_text()
    assert "(GT calls packed), phenotype 'status' from" in out
    assert tables["cohort.bed"] == tables["cohort.vcf"]
    from pyinterp.cli import genotypes
    assert not genotypes.is_genotype_file("table.csv.zst") and genotypes.is_genotype_file("a.pvar.zst")


def test_covariates_adjust_the_phenotype_before_the_forest(cohort, capsys):
    from sklearn.linear_model import LinearRegression

    from pyinterp.io.phenotypes import adjust_for_covariates

    folder, G, _, trait = cohort
    rng = np.random.default_rng(5)
    pc1 = rng.standard_normal(N)
    lines = ["FID IID PC1 batch"]
    for i in range(N):
        if i % 60 == 2:
            continue  # 4 absent
        lines.append(f"F{i} S{i} {'NA' if i % 70 == 9 else f'{pc1[i]:.6f}'} {'xyz'[i % 3]}")
    (folder / "covar.txt").write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "importance", folder / "cohort.bed", "--pheno", folder / "pheno.txt",
                         "--pheno-name", "trait", "--covar", folder / "covar.txt", "--covar-mode", "adjust",
                         "--n-estimators", 20, "--n-jobs", 1, "--out", folder / "out")
    assert (code, err) == (0, ""), err
    has_trait = {i for i in range(N) if i % 48 != 1 and i % 40 != 3 and i != 5}
    has_covar = {i for i in range(N) if i % 60 != 2 and i % 70 != 9}
    rows = sorted(has_trait & has_covar)
    assert f"{len(has_covar)} of the {N} genotyped samples have every covariate of" in out
    assert "; 4 are not in it; 4 miss one" in out
    assert (f"trait adjusted for 2 covariate columns (PC1, batch; batch as indicators of its levels) by least "
            f"squares, on the {len(rows)} "
            "samples with both: the forests explain the residuals (regression)") in out
    design = np.column_stack([[float(f"{pc1[i]:.6f}") for i in rows], [i % 3 == 1 for i in rows],
                              [i % 3 == 2 for i in rows]]).astype(float)
    y = np.array([float(f"{trait[i]:.6f}") for i in rows])
    residuals = adjust_for_covariates(y, design)
    np.testing.assert_allclose(residuals, y - LinearRegression().fit(design, y).predict(design), atol=1e-12)
    forest = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0, n_jobs=1).fit(G[rows], residuals)
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    np.testing.assert_array_equal(table.loc[[f"rs{k}" for k in range(P)], "mdi_oob"].to_numpy(),
                                  mdi_oob(forest, G[rows], residuals))


@pytest.mark.parametrize("argv, message", [
    (["--covar-mode", "adjust", "--task", "classification"],
     "--covar-mode adjust leaves a continuous residual: leave out --task classification"),
    (["--covar-name", "PC1,age"], "no covariate 'age'; its columns are PC1, constant"),
    (["--covar-mode", "adjust", "--covar-name", "constant"], "the covariates are collinear (or one is constant)"),
])
def test_covariate_problems_are_one_line(cohort, capsys, argv, message):
    folder = cohort[0]
    (folder / "covar.txt").write_text("#IID PC1 constant\n" + "".join(f"S{i} {i % 7} 1\n" for i in range(N)))
    code, out, err = run(capsys, "importance", folder / "cohort.bed", "--covar", folder / "covar.txt", *argv)
    assert code == 1 and message in err and err.count("\n") == 1, err


def test_covariates_at_every_split_by_default(cohort, capsys):
    """--covar without --covar-mode: the covariates are columns beside the packed calls, searched at
    every split; the importances are those of the forest on the same matrix in memory, and the
    interaction tables hold no covariate unless --covar-interactions asks."""
    folder, G, y, _ = cohort
    rng = np.random.default_rng(6)
    pcs = rng.standard_normal((N, 2))
    pcs[:, 0] += 2.0 * (y == y.max())  # PC1 tags the cases: interactions hold it
    lines = ["#IID PC1 PC2"] + [f"S{i} {pcs[i, 0]:.6f} {pcs[i, 1]:.6f}" for i in range(N) if i % 50 != 7]
    (folder / "covar.txt").write_text("\n".join(lines) + "\n")
    common = ("--covar", folder / "covar.txt", "--n-estimators", 20, "--n-jobs", 1, "--max-features", 0.2)
    code, out, err = run(capsys, "all", folder / "cohort.bed", *common, "--out", folder / "out")
    assert (code, err) == (0, ""), err
    rows = np.array([i for i in range(N) if i % 50 != 7])
    assert (f"2 covariate columns (PC1, PC2) are searched at every split beside the genotypes (ranger's "
            f"always.split.variables), on the {len(rows)} samples with phenotype and every covariate") in out
    assert f"n={len(rows)} samples, p={P} variants (read in place)" in out
    X = np.column_stack([G[rows].astype(np.float64), [[float(f"{v:.6f}") for v in pcs[i]] for i in rows]])
    forest = RandomForestClassifier(n_estimators=20, oob_score=True, random_state=0, n_jobs=1, max_features=0.2,
                                    always_split_features=[P, P + 1]).fit(X, y[rows])
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    names = [f"rs{k}" for k in range(P)] + ["PC1", "PC2"]
    np.testing.assert_array_equal(table.loc[names, "mdi_oob"].to_numpy(), mdi_oob(forest, X, y[rows]))
    shown = read_csv_exact(folder / "out" / "irf.csv")["interaction"]
    assert len(shown) and not shown.str.contains("PC").any()
    code, out, err = run(capsys, "interactions", folder / "cohort.bed", *common, "--covar-interactions",
                         "--out", folder / "all")
    assert (code, err) == (0, ""), err
    assert read_csv_exact(folder / "all" / "irf.csv")["interaction"].str.contains("PC").any()


def test_a_text_covariate_is_split_as_categories(cohort, capsys):
    """A text covariate (batch) is one column of its levels' codes, split as categories by every
    forest of every step: the importances are those of a forest given the same codes as
    CategoryCodes, and LSSFind, iRF and the pair scan take them."""
    from pyinterp import CategoryCodes

    folder, G, _, trait = cohort
    rng = np.random.default_rng(8)
    pc1 = rng.standard_normal(N)
    batch = rng.choice(["north", "south", "west"], N)
    lines = ["#IID PC1 batch"] + [f"S{i} {pc1[i]:.6f} {batch[i]}" for i in range(N)]
    (folder / "covar.txt").write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "all", folder / "cohort.bed", "--pheno", folder / "pheno.txt", "--pheno-name", "trait",
                         "--covar", folder / "covar.txt", "--n-estimators", 20, "--n-jobs", 1, "--max-features", 0.2,
                         "--lss-estimators", 20, "--n-iterations", 2, "--n-bootstraps", 2, "--rit-trees", 20,
                         "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert "2 covariate columns (PC1, batch) are searched at every split" in out
    assert "covariates split as categories (a set of levels to each side): batch (3 levels: north, south, west)" in out
    rows = np.array([i for i in range(N) if i % 48 != 1 and i % 40 != 3 and i != 5])
    codes = np.searchsorted(["north", "south", "west"], batch[rows]).astype(float)
    X = np.column_stack([G[rows].astype(np.float64), [float(f"{pc1[i]:.6f}") for i in rows], codes])
    y = np.array([float(f"{trait[i]:.6f}") for i in rows])
    forest = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0, n_jobs=1, max_features=0.2,
                                   always_split_features=[P, P + 1],
                                   categorical_features=CategoryCodes({P + 1: ["north", "south", "west"]})).fit(X, y)
    assert any(np.any((t.feature == P + 1) & np.isnan(t.threshold)) for t in forest.trees_)  # category splits
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    names = [f"rs{k}" for k in range(P)] + ["PC1", "batch"]
    np.testing.assert_array_equal(table.loc[names, "mdi_oob"].to_numpy(), mdi_oob(forest, X, y))
    for step in ("lssfind", "irf", "pairs"):
        assert not read_csv_exact(folder / "out" / f"{step}.csv")["interaction"].str.contains("batch|PC1").any()


def test_a_covariate_of_too_many_levels_is_refused():
    from pyinterp.io.phenotypes import Phenotypes, match_covariates

    ids = np.array([f"S{i}" for i in range(300)], dtype=object)
    table = Phenotypes(None, ids, {"site": np.array([f"site{i % 257}" for i in range(300)], dtype=object)})
    with pytest.raises(ValueError, match="c.txt: covariate 'site' has 257 levels; a categorical covariate may have "
                                         "at most 256"):
        match_covariates({"iid": ids}, table, None, "c.txt")


def test_more_columns_than_the_screen_are_screened_then_every_kept_pair_tested(cohort, capsys):
    """--screen 12 of 60 variants: the pair table is screen_pairs' on the same data (the covariates
    offered at every split and removed from the scan's y), and LSSFind and iRF fit on the kept
    variants, named as in the file."""
    from pyinterp.interactions import screen_pairs

    folder, G, _, trait = cohort
    rng = np.random.default_rng(8)
    pcs = rng.standard_normal((N, 2))
    (folder / "covar.txt").write_text("#IID PC1 PC2\n" + "".join(f"S{i} {pcs[i, 0]:.6f} {pcs[i, 1]:.6f}\n"
                                                                 for i in range(N)))
    code, out, err = run(capsys, "interactions", folder / "cohort.bed", "--pheno", folder / "pheno.txt",
                         "--pheno-name", "trait", "--covar", folder / "covar.txt", "--screen", 12,
                         "--n-estimators", 20, "--n-jobs", 1, "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert "a forest of 300 trees on 114 rows ranked the 60 columns by MDI-oob; every pair of the first 12, 66 pairs" in out
    from pyinterp.io.phenotypes import match_phenotype

    G_file = read_plink(folder / "cohort.bed")
    matched = match_phenotype(G_file.sample_table, read_pheno(folder / "pheno.txt"), "trait", "pheno.txt")
    rows, y = matched.rows, matched.values
    X = G_file[rows].with_covariates([[float(f"{v:.6f}") for v in pcs[i]] for i in rows], names=["PC1", "PC2"])
    found = screen_pairs(X, y, n_features=12, always_split_features=["PC1", "PC2"], random_state=0,
                         n_jobs=1, top=1000)
    table = read_csv_exact(folder / "out" / "pairs.csv")
    assert table["interaction"].tolist() == [found.scan.interactions.label(f) for f in found.scan.interactions.features]
    np.testing.assert_array_equal(table["pvalue"], found.scan.interactions["pvalue"])
    # the first 20 pairs (--triples) each with the other 10 kept columns, on the scan's rows
    assert f"the first 20 pairs each with every other of the 12 columns (--triples), {found.triples.n_triples} " in out
    triples = read_csv_exact(folder / "out" / "triples.csv")
    assert triples["interaction"].tolist() == [found.triples.interactions.label(f)
                                               for f in found.triples.interactions.features]
    np.testing.assert_array_equal(triples["threshold_3"], found.triples.interactions["threshold_3"])
    kept = {f"rs{k}" for k in found.features}
    for name in ("lssfind", "irf"):
        labels = read_csv_exact(folder / "out" / f"{name}.csv")["interaction"]
        assert all(set(label.replace("+", "").replace("-", "").split(" & ")) <= kept for label in labels)
    # --fit-columns: LSSFind and iRF fit on the screen's first columns by MDI-oob, the pairs as before
    code, out, err = run(capsys, "interactions", folder / "cohort.bed", "--pheno", folder / "pheno.txt",
                         "--pheno-name", "trait", "--covar", folder / "covar.txt", "--screen", 12,
                         "--fit-columns", 4, "--triples", 0, "--n-estimators", 20, "--n-jobs", 1, "--out",
                         folder / "out4")
    assert (code, err) == (0, ""), err
    assert "LSSFind and iRF below fit on the first 4 of those columns (--fit-columns)" in out
    assert "Triple scan" not in out and not (folder / "out4" / "triples.csv").exists()  # --triples 0
    assert read_csv_exact(folder / "out4" / "pairs.csv")["interaction"].tolist() == table["interaction"].tolist()
    first = {f"rs{k}" for k in found.features[:4]}
    labels = [label for name in ("lssfind", "irf") for label in read_csv_exact(folder / "out4" / f"{name}.csv")["interaction"]]
    assert labels and all(set(label.replace("+", "").replace("-", "").split(" & ")) <= first for label in labels)
    # --max-pairs: the most pairs scanned; "auto" keeps as many columns as make that many at most
    code, out, err = run(capsys, "interactions", folder / "cohort.bed", "--pheno", folder / "pheno.txt",
                         "--pheno-name", "trait", "--max-pairs", 10, "--triples", 0, "--n-estimators", 20,
                         "--n-jobs", 1, "--out", folder / "out5")
    assert (code, err) == (0, ""), err
    assert "every pair of the first 5, 10 pairs" in out


def test_a_bgen_with_its_sample_file_gives_the_tables_of_the_same_calls_as_a_bed(cohort, capsys):
    bgen = pytest.importorskip("bgen", reason="the bgen package (the test extras) writes the .bgen")
    folder, G, y, _ = cohort
    probabilities = np.zeros((N, 3))
    with bgen.BgenWriter(str(folder / "cohort.bgen"), N, samples=[f"S{i}" for i in range(N)]) as writer:
        for k in range(P):  # REF C, ALT T: the ALT count is G's count
            probabilities[:] = 0.0
            known = ~np.isnan(G[:, k])
            probabilities[known, G[known, k].astype(int)] = 1.0
            probabilities[~known] = np.nan
            writer.add_variant(f"v{k}", f"rs{k}", "1", 10 * k + 1, ["C", "T"], probabilities)
    (folder / "cohort.sample").write_text("ID_1 ID_2 missing sex status\n0 0 0 D B\n"
                                          + "".join(f"F{i} S{i} 0 NA {c + 1}\n" for i, c in enumerate(y)))
    tables = {}
    for name in ("cohort.bed", "cohort.bgen"):
        code, out, err = run(capsys, "importance", folder / name, "--n-estimators", 20, "--n-jobs", 1,
                             "--out", folder / name.replace(".", "_"))
        assert (code, err) == (0, ""), err
        tables[name] = (folder / name.replace(".", "_") / "importances.csv").read_text()
    assert "(hardcalls packed), phenotype 'status' from cohort.sample (classification" in out
    assert tables["cohort.bed"] == tables["cohort.bgen"]


def test_genes_from_a_gene_list_name_the_variants_in_every_table(cohort, capsys):
    """--genes (PLINK's glist format): each table's variants carry the genes whose ranges hold
    them (1-based, inclusive; chr1 and 1 the same chromosome), after the screen narrows the columns too."""
    folder, G, _, trait = cohort
    bed_reader.to_bed(folder / "placed.bed", G, properties={
        "fid": [f"F{i}" for i in range(N)], "iid": [f"S{i}" for i in range(N)], "sid": [f"rs{k}" for k in range(P)],
        "chromosome": ["1"] * P, "bp_position": [1000 * (k + 1) for k in range(P)]})
    (folder / "glist.txt").write_text("1 10000 11500 GENE_A\nchr1 20500 21000 GENE_B\n1 11000 11000 GENE_D\n"
                                      "2 1 100000 GENE_C\n")
    code, out, err = run(capsys, "all", folder / "placed.bed", "--pheno", folder / "pheno.txt", "--pheno-name",
                         "trait", "--genes", folder / "glist.txt", "--screen", 12, "--n-estimators", 20,
                         "--n-jobs", 1, "--pvalues", "none", "--lss-estimators", 30, "--n-iterations", 2,
                         "--n-bootstraps", 2, "--rit-trees", 100, "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert "--genes: 3 of the 60 variants lie in a gene of" in out
    genes = {"rs9": "GENE_A", "rs10": "GENE_A;GENE_D", "rs20": "GENE_B"}
    table = read_csv_exact(folder / "out" / "importances.csv")
    assert table.columns[:3].tolist() == ["rank", "feature", "genes"]
    assert table["genes"].tolist() == [genes.get(f, ".") for f in table["feature"]]
    assert "rs10 (GENE_A;GENE_D)" in out
    for name in ("pairs", "lssfind", "irf"):
        table = read_csv_exact(folder / "out" / f"{name}.csv")
        assert len(table) and "genes" in table.columns
        for label, cell in zip(table["interaction"], table["genes"]):
            variants = label.replace("+", "").replace("-", "").split(" & ")
            assert cell == ", ".join(genes.get(v, ".") for v in variants)


@pytest.mark.parametrize("text,message", [
    ("1 10000 GENE_A\n", r"glist.txt, line 1: expected 'chrom start end name'"),
    ("# genes\n1 100 ten GENE_A\n", r"glist.txt, line 2: start and end must be base-pair positions"),
    ("1 500 100 GENE_A\n", r"glist.txt, line 1: the gene 'GENE_A' starts at 500, after its end 100"),
    ("# nothing\n", r"glist.txt: no gene range in it")])
def test_a_bad_gene_list_is_one_line_naming_the_file_and_line(cohort, capsys, text, message):
    folder = cohort[0]
    (folder / "glist.txt").write_text(text)
    code, _, err = run(capsys, "importance", folder / "cohort.bed", "--genes", folder / "glist.txt")
    assert code == 1 and re.search(message, err) and err.count("\n") == 1, err


def test_genes_on_a_table_or_simulated_data_are_refused(tmp_path, capsys):
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0] * 5, "y": [0.0, 1.0, 2.0] * 5}).to_csv(path, index=False)
    code, _, err = run(capsys, "importance", path, "--target", "y", "--genes", path)
    assert code == 1 and "--genes is for genotype files" in err
    code, _, err = run(capsys, "demo", "--genes", path)
    assert code == 1 and "simulated data have none" in err
