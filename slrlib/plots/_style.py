"""Shared figure conventions: one colour per predictor, across the whole book."""

COLORS = {
    "attention": "#1f77b4",
    "softmax": "#9467bd",
    "oracle": "#17becf",
    "bayes": "#2ca02c",
    "linear": "#d62728",
    "null": "#7f7f7f",
    "bound": "#000000",
    "monte_carlo": "#ff7f0e",
}
FIGSIZE = (6.4, 4.0)
