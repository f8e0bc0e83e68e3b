"""Fitting an equation's parameters to the training data: the reference's BFGS (`fit`), the
enhanced fit, SGA's Adam, and what they share (`objective`)."""
