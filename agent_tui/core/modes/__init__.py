"""Plan mode and bash mode: switching the permission mode, the model's plan, ``!cmd``."""
