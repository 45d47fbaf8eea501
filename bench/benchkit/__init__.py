"""The bench library: data sets, timing, optional peers, paths, plotting and the results-section
writer that bench/*.py drivers and the asv suites in bench/benchmarks/ share. Nothing here is
imported by pyinterp itself."""
