"""What ragreport connects to: retrievers called over the queries (:mod:`.collect`, with
what they return read by :mod:`.retrieved` and the resume file by :mod:`.resume`).
Experiment trackers (MLflow, W&B) are in :mod:`ragreport.report.tracking`, beside the
report they send."""
