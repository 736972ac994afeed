"""The public author tier: the building blocks policies are made of."""
