"""The policy trainer: a causal language model trained on rollouts (outcome term) and on single decisions with a
teacher's hint (decision-point term). See the README's "Policy training" section.

Modules: ``tiny`` (in-code tokenizer and random models), ``checkpoint`` (HF folders), ``losses`` (pure functions),
``shards`` (Parquet datasets), ``train`` (the loop), ``distributed`` (FSDP2 / torchrun), ``job`` (the Batch job).
"""
