"""Which precision: TF32, AMP (fp16, bf16)? (its view and template)."""
