"""recompdiag in the frameworks that own the training loop: a callback each, that makes the Monitor
when training begins and marks every optimizer step.

    from recompdiag.integrations.transformers import RecompdiagCallback   # Hugging Face Trainer
    from recompdiag.integrations.lightning import RecompdiagCallback      # PyTorch Lightning

Importing this package imports neither framework: each integration imports its own when it is
imported."""
