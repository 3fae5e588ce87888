"""Flywheel's training image: small reward models distilled from a judge's verdicts (see README.md)."""

FORMAT = "flywheel-reward-model/1"
