"""The studies and experiments built on the library: the paper's protocol (every method by name, the result store and
runners, Table 1, LODO, ablations), realistic batches and the label ratio unknown, theory checks, robustness,
marginals, the streaming study, calibration, prompts and the data-driven defaults. The library never imports them."""
