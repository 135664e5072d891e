"""Monte Carlo docking campaigns on the all-digital reference, and flight reconstruction
(issue 23; docs/campaigns.md). One module per concept:

* :mod:`.spec` -- the campaign file (``config/campaigns/*.toml``): base case, dispersions, N,
  seed, sampling; validated before any work starts (file, key, reason);
* :mod:`.sampling` -- the unit design (random | lhs | sobol, ``scipy.stats.qmc``) and the
  marginals (uniform, normal, truncated normal); sample i depends on (seed, index) only
  (random, sobol) or on (seed, N, index) (lhs);
* :mod:`.apply` -- a sample's values applied to the case, the vehicles and the mechanism;
* :mod:`.outcome` -- one sample run on the digital reference, reduced to one result row;
* :mod:`.store` -- the results directory: manifest and Parquet parts, written as samples finish;
* :mod:`.engine` -- the Dask driver (LocalCluster or an existing scheduler), progress, resume;
* :mod:`.summary` / :mod:`.figures` -- capture probability (Wilson), envelopes, peak loads, worst
  samples; the PDF;
* :mod:`.telemetry` / :mod:`.reconstruct` -- a docking's telemetry; its initial conditions by least
  squares over simulations.

Nothing here runs in (or adds work to) the real-time loop.
"""
