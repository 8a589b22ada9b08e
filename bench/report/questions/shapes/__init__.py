"""What happens when input shapes change? (its view and template)."""
